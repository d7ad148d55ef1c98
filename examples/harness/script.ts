// The script a model wrote for this harness: it asks the user, then opens a ticket (a call
// that needs the harness's approval), and returns what it did.
import { harness, tickets } from "rewind:tools";

export default async function main(input: { title: string }) {
  const answer = await harness.ask_user({ question: `Open a high-priority ticket "${input.title}"?` });
  const priority = answer.yes ? "high" : "low";
  const ticket = await tickets.create_ticket({ title: input.title, priority });
  const { tickets: open } = await tickets.list_tickets({});
  return { opened: ticket.number, priority, open: open.length };
}
