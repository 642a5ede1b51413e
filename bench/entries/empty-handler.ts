/** The floor a cold start's import is compared with: a handler that imports nothing. */
export const handler = async () => ({ statusCode: 200, body: "" });
