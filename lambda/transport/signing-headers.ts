/**
 * The part of the Fetch API's Headers that aws4fetch's AwsV4Signer uses, on a Map. The bundle injects
 * it in place of the global Headers (tools/bundle-options.ts), whose first use loads all of undici:
 * ~22 ms of every cold start, for a request the function sends with node:http anyway.
 * Like the real one: names are case-insensitive, and keys and entries come lower-cased and sorted.
 */
export class SigningHeaders {
  readonly #values = new Map<string, string>();

  constructor(init: Record<string, string> = {}) {
    for (const [name, value] of Object.entries(init)) this.set(name, value);
  }

  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null;
  }

  set(name: string, value: string): void {
    this.#values.set(name.toLowerCase(), String(value));
  }

  has(name: string): boolean {
    return this.#values.has(name.toLowerCase());
  }

  delete(name: string): void {
    this.#values.delete(name.toLowerCase());
  }

  keys(): IterableIterator<string> {
    return [...this.#values.keys()].sort()[Symbol.iterator]();
  }

  entries(): IterableIterator<[string, string]> {
    return [...this.keys()]
      .map((name): [string, string] => [name, this.#values.get(name) ?? ""])
      [Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

export { SigningHeaders as Headers };
