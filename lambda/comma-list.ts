/**
 * The items of a comma-separated list, trimmed, empty ones dropped: a setting such as JWT_CLIENT_IDS or
 * `-c corsAllowOrigins`, or a header such as Content-Encoding. `undefined` is the empty list.
 */
export function commaList(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}
