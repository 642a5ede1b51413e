import { callDynamoDb } from "../../local/dynamodb.ts";

/** The item stored under a plant id, read consistently from the store the test started; undefined if none. */
export async function readStoredItem(
  endpoint: string,
  tableName: string,
  id: string | number | bigint,
): Promise<Record<string, unknown> | undefined> {
  const { body } = await callDynamoDb(endpoint, "GetItem", {
    TableName: tableName,
    Key: { id: { N: String(id) } },
    ConsistentRead: true,
  });
  return body.Item as Record<string, unknown> | undefined;
}
