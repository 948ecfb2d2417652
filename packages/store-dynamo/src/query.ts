import type { AttributeValue, DynamoDBClient, QueryCommandInput } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import type { StoreKit } from '@stepfold/engine';

/** One index entry as a Query with a keys-only projection returns it. */
export type IndexItem = Record<string, AttributeValue>;

/**
 * Pages through an index Query until `want` items matched or the index is exhausted. Without a
 * filter each page asks for just the items still wanted; with one, DynamoDB's page size applies.
 */
export async function queryItems(
  client: DynamoDBClient,
  guard: StoreKit['guard'],
  input: QueryCommandInput,
  want: number,
  what: string,
): Promise<IndexItem[]> {
  const items: IndexItem[] = [];
  let start: IndexItem | undefined;
  do {
    const out = await guard(what, () =>
      client.send(
        new QueryCommand({
          ...input,
          ...(input.FilterExpression ? {} : { Limit: want - items.length }),
          ExclusiveStartKey: start,
        }),
      ),
    );
    for (const item of out.Items ?? []) if (items.length < want) items.push(item);
    start = out.LastEvaluatedKey;
  } while (start && items.length < want);
  return items;
}
