export { unorderedFloor as handler } from "../floor-handlers.ts";
