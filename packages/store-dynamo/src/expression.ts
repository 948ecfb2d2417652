import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The placeholders of one request's expressions: `#attr` for each attribute named (the names here
 * are plain identifiers, some of them DynamoDB reserved words) and `:vN` for each value.
 */
export class Expr {
  private readonly names: Record<string, string> = {};
  private readonly values: Record<string, AttributeValue> = {};
  private count = 0;

  /** `#attr`, registered. */
  n(attr: string): string {
    this.names[`#${attr}`] = attr;
    return `#${attr}`;
  }

  /** A new placeholder for `value`. */
  v(value: AttributeValue): string {
    const key = `:v${this.count++}`;
    this.values[key] = value;
    return key;
  }

  /** A new placeholder for a string. */
  s(text: string): string {
    return this.v({ S: text });
  }

  /** A new placeholder for a number. */
  num(x: number): string {
    return this.v({ N: String(x) });
  }

  /** `#attr IN (…)` over `texts`, in groups of 100 (DynamoDB's most per IN) joined by OR. */
  oneOf(attr: string, texts: readonly string[]): string {
    const groups: string[] = [];
    for (let i = 0; i < texts.length; i += 100)
      groups.push(
        `${this.n(attr)} IN (${texts
          .slice(i, i + 100)
          .map((t) => this.s(t))
          .join(', ')})`,
      );
    return groups.length === 1 ? groups[0]! : `(${groups.join(' OR ')})`;
  }

  /** The `ExpressionAttributeNames`/`Values` fields of a request (an empty map is refused by DynamoDB). */
  get fields(): {
    ExpressionAttributeNames: Record<string, string>;
    ExpressionAttributeValues?: Record<string, AttributeValue>;
  } {
    return {
      ExpressionAttributeNames: this.names,
      ...(this.count ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

/** An UpdateExpression from its SET and REMOVE clauses. */
export function updateExpression(set: readonly string[], remove: readonly string[]): string {
  return [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
}
