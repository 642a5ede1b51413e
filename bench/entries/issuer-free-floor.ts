/** The issuer-free floor, its init (delivered keys imported, the store's connection opening) at import. */
import { issuerFreeFloor } from "../floors.ts";

export const handler = issuerFreeFloor();
