/** The store floor (bench/floors.ts): one signed PutItem, on a connection opened when it is sent. */
import { storeFloor } from "../floors.ts";

export const handler = storeFloor();
