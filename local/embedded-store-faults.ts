/**
 * dynalite rethrows any LevelDB error it does not expect (`if (err) throw err`, in a callback), which
 * ends the whole process: a full disk killed `npm start` mid-request, an unusable store killed it at
 * start with a bare "Error: Database is closed". Here both become what DynamoDB does instead: a store
 * that cannot open is refused at start with its cause, and a failed read or write is answered
 * `500 InternalServerError`, which the function retries and then answers 503, while the server lives on.
 */
import { createRequire } from "node:module";

/** The LevelDB class dynalite opens its data with (classic-level, through the `level` package). */
interface LevelClass {
  new (location: string): { open(): Promise<void>; close(): Promise<void> };
  prototype: Record<string, unknown>;
}

const requireFromDynalite = createRequire(createRequire(import.meta.url).resolve("dynalite"));
const { Level } = requireFromDynalite("level") as { Level: LevelClass };

/** The private methods through which every read and write of dynalite reaches LevelDB. */
const STORAGE_METHODS = ["_get", "_getMany", "_put", "_del", "_batch"] as const;

/** What dynalite answers for an error carrying these: `sendData(req, res, err.body, err.statusCode)`. */
export class EmbeddedStoreFault extends Error {
  readonly statusCode = 500;
  readonly body = {
    __type: "com.amazonaws.dynamodb.v20120810#InternalServerError",
    message: "the embedded store failed; see the local API's log",
  };
  // dynalite passes its errors on only when they are not LevelDB's "not open": this code is not that.
  readonly code = "LOCAL_STORE_FAULT";

  constructor(cause: unknown) {
    super(`the embedded store failed: ${causeOf(cause)}`, { cause });
    this.name = "EmbeddedStoreFault";
  }
}

let installed = false;

/**
 * Makes every LevelDB error of the process's dynalite stores an answer instead of a crash. Once per
 * process, before the first store opens; `report` hears of each fault (the server logs it).
 */
export function answerStoreFaults(report: (fault: EmbeddedStoreFault) => void = logFault): void {
  if (installed) return;
  installed = true;
  for (const name of STORAGE_METHODS) {
    const original = Level.prototype[name];
    if (typeof original !== "function") continue;
    Level.prototype[name] = async function (this: unknown, ...args: unknown[]) {
      try {
        return await original.apply(this, args);
      } catch (error) {
        const fault = new EmbeddedStoreFault(error);
        report(fault);
        throw fault;
      }
    };
  }
}

/** Opens and closes the LevelDB at `location`: throws, naming the cause, when it cannot be used. */
export async function checkStoreOpens(location: string): Promise<void> {
  const db = new Level(location);
  try {
    await db.open();
  } catch (error) {
    throw new Error(`the embedded store in ${location} cannot be opened: ${causeOf(error)}`);
  }
  await db.close();
}

function logFault(fault: EmbeddedStoreFault): void {
  console.error(`${fault.message}; the request gets 500 InternalServerError from the store`);
}

/** LevelDB's own message ("IO error: ...: No space left on device"), under abstract-level's wrapper. */
function causeOf(error: unknown): string {
  let innermost = error;
  while (innermost instanceof Error && innermost.cause !== undefined) innermost = innermost.cause;
  return innermost instanceof Error ? innermost.message : String(innermost);
}
