/** The issuer-free floor with the API's duties, its init (delivered keys, the store's connection) at import. */
import { issuerFreeSteps } from "../floor-handlers.ts";
import { floorWithDuties } from "../floor-with-duties.ts";

export const handler = floorWithDuties(issuerFreeSteps());
