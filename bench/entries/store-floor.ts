export { storeFloor as handler } from "../floor-handlers.ts";
