/**
 * A field value without the optional whitespace around it (RFC 9110 §5.5: spaces and tabs). A loop, not a
 * regular expression: `/[ \t]+$/` retries at every space of a long run, quadratic in a crafted header.
 */
export function withoutOptionalWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (value[start] === " " || value[start] === "\t") start++;
  while (end > start && (value[end - 1] === " " || value[end - 1] === "\t")) end--;
  return value.slice(start, end);
}
