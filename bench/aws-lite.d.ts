/** The little of aws-lite's DynamoDB plugin the peer (bench/peers/aws-lite.ts) uses; it ships no types. */
declare module "@aws-lite/dynamodb" {
  const plugin: unknown;
  export default plugin;
}
