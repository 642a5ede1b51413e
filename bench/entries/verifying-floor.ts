export { verifyingFloor as handler } from "../floor-handlers.ts";
