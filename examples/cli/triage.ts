// The CLI walkthrough's script: opens a high-priority ticket (a call that waits for approval)
// and says how many tickets were open before and after.
import { tickets } from "rewind:tools";

export default async function main(input: { title: string }) {
  const before = await tickets.list_tickets({});
  const ticket = await tickets.create_ticket({ title: input.title, priority: "high" });
  const after = await tickets.list_tickets({});
  return { opened: ticket.number, open: after.tickets.length, before: before.tickets.length };
}
