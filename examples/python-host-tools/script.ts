// A script a model could write against the Python worker's tools: it prices an item (the pricing
// service drops the first attempt, and Rewind sends the call again), orders it, and looks up a
// customer who may not exist, handling the ToolError the worker raises then.
import { orders, ToolError } from "rewind:tools";

export default async function main(input: { item: string; email: string }) {
  const quote = await orders.fetch_quote({ item: input.item });
  const order = await orders.create_order({ item: input.item, quantity: 2 });
  let customer: string;
  try {
    customer = (await orders.find_customer({ email: input.email })).name;
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    customer = `unknown (${error.code}: ${error.message})`;
  }
  return { price: quote.price, quoteAttempt: quote.attempt, order: order.orderId, key: order.idempotencyKey, customer };
}
