/**
 * `npm run --silent token`: prints one access token, and nothing else, for the local API (or, with
 * `--stack [name]`, for a deployed stack). Options: --scope "<scopes>", --expires-in <seconds>.
 */
import { mintLocalToken } from "./local-issuer.ts";
import { dataDirFrom } from "./local-settings.ts";

const USAGE = `usage: npm run --silent token [-- --scope "<scopes>"] [--expires-in <seconds>] [--stack [name]]`;
/** Ten years, either way: an `exp` any JWT library reads as a date. */
const MAX_LIFETIME_SECONDS = 10 * 366 * 24 * 3600;

interface TokenArguments {
  scope?: string;
  expiresInSeconds?: number;
  /** Set for --stack: the stack name, or undefined for the default one. */
  stack?: { name: string | undefined };
}

/** Parsed by hand: node's parseArgs takes neither an optional value (--stack) nor a negative one (-60). */
function parseTokenArguments(args: string[]): TokenArguments {
  const parsed: TokenArguments = {};
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? "";
    const equals = arg.indexOf("=");
    const [flag, inline] = equals === -1 ? [arg, undefined] : [arg.slice(0, equals), arg.slice(equals + 1)];
    // Another flag is no value: `--scope --stack` would ask the local issuer for a scope `--stack`.
    const next = args[index + 1]?.startsWith("--") ? undefined : args[index + 1];
    const value = () => {
      if (inline !== undefined) return inline;
      if (next === undefined) throw new Error(`${flag} needs a value`);
      index++;
      return next;
    };
    if (flag === "--scope") parsed.scope = value();
    else if (flag === "--expires-in") parsed.expiresInSeconds = lifetime(flag, value());
    else if (flag === "--stack")
      parsed.stack = { name: inline ?? (next === undefined ? undefined : value()) };
    else throw new Error(`unknown argument '${arg}'`);
  }
  return parsed;
}

function lifetime(flag: string, text: string): number {
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || Math.abs(value) > MAX_LIFETIME_SECONDS) {
    throw new Error(
      `${flag} must be a whole number of seconds, at most ${MAX_LIFETIME_SECONDS} either way, got '${text}'`,
    );
  }
  return value;
}

async function token(args: TokenArguments): Promise<string> {
  if (!args.stack) return mintLocalToken(dataDirFrom(process.env), args);
  if (args.scope !== undefined || args.expiresInSeconds !== undefined) {
    throw new Error("--scope and --expires-in apply to local tokens only; the stack's issuer decides");
  }
  // Loaded only here: the AWS SDK would slow every local token down.
  const { fetchStackToken } = await import("./stack-token.ts");
  return fetchStackToken(args.stack.name);
}

const args = process.argv.slice(2);
if (args.includes("--help")) {
  console.log(USAGE);
  process.exit(0);
}
let parsed: TokenArguments;
try {
  parsed = parseTokenArguments(args);
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(1);
}
try {
  process.stdout.write(`${await token(parsed)}\n`);
} catch (error) {
  // One line that says what to do: the usage is no help when the arguments were right.
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
