/** The warm floor with the API's duties, for item 3 (bench/warm-cpu.ts), which calls it once. */
import { floorWithDuties } from "../floor-with-duties.ts";
import { warmSteps } from "../warm-floor.ts";

export const warmFloorWithDuties = () => floorWithDuties(warmSteps());
