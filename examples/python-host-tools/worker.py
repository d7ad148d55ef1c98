"""Host tools served from Python with Temporal's Python SDK (temporalio), no Rewind code.

A host tool is a Temporal activity whose type is the tool's qualified name (``orders.create_order``),
polled on the task queue the toolset names for its group; docs/host-tools.md is the contract this
file follows. Each tool below shows one part of it:

- ``orders.create_order`` succeeds, and reads the call's idempotency key and attempt;
- ``orders.find_customer`` fails the call for good with a ToolError the script can catch;
- ``orders.fetch_quote`` fails its first attempt with an ordinary exception (an interruption,
  which Rewind retries under the tool's policy) and succeeds on the next;
- ``orders.export_orders`` runs for a while, heartbeats its progress, resumes from it on a retry,
  and stops when the run is cancelled.

Every attempt and cancellation is printed as one JSON line on stdout.

Usage: python worker.py [--address 127.0.0.1:7233] [--namespace default] [--task-queue python-harness]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import Any, NoReturn

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

# The ApplicationError type Rewind reads as a ToolError the host tool chose (never retried).
HOST_TOOL_ERROR_TYPE = "HostToolError"


def raise_tool_error(code: str, message: str, details: Any = None) -> NoReturn:
    """Fails the call for good: the script's ToolError gets this code, message and details."""
    raise ApplicationError(
        message,
        {"code": code, "details": details},
        type=HOST_TOOL_ERROR_TYPE,
        non_retryable=True,
    )


def call_context() -> dict[str, Any]:
    """The idempotency key (``<run_id>/<seq>``, the same on every attempt) and the attempt (1, 2…)."""
    info = activity.info()
    return {"key": f"{info.workflow_id}/{info.activity_id}", "attempt": info.attempt}


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def announce(tool: str, call: dict[str, Any]) -> dict[str, Any]:
    context = call_context()
    emit("attempt", tool=tool, traceparent=call.get("traceparent"), args=call["args"], **context)
    return context


# Orders by idempotency key: a call sent again after an interruption finds its order here
# instead of creating a second one. A real tool keeps the key with the effect (a unique column).
ORDERS: dict[str, dict[str, Any]] = {}


@activity.defn(name="orders.create_order")
async def create_order(call: dict[str, Any]) -> dict[str, Any]:
    context = announce("orders.create_order", call)
    args = call["args"]
    order = ORDERS.get(context["key"])
    if order is None:
        order = {"orderId": f"order-{len(ORDERS) + 1}", "item": args["item"], "quantity": args["quantity"]}
        ORDERS[context["key"]] = order
    return {**order, "idempotencyKey": context["key"], "attempt": context["attempt"]}


CUSTOMERS = {"ada@example.com": {"name": "Ada Lovelace", "tier": "gold"}}


@activity.defn(name="orders.find_customer")
async def find_customer(call: dict[str, Any]) -> dict[str, Any]:
    announce("orders.find_customer", call)
    email = call["args"]["email"]
    customer = CUSTOMERS.get(email)
    if customer is None:
        raise_tool_error("toolFailed", "no customer with that email", {"email": email})
    return customer


@activity.defn(name="orders.fetch_quote")
async def fetch_quote(call: dict[str, Any]) -> dict[str, Any]:
    context = announce("orders.fetch_quote", call)
    if context["attempt"] == 1:
        # Stands for a transient failure: any exception other than a HostToolError is an
        # interruption, and the same call comes again with the same key and the next attempt.
        raise ConnectionError("the pricing service dropped the connection")
    return {"item": call["args"]["item"], "price": 12.5, "attempt": context["attempt"]}


@activity.defn(name="orders.export_orders")
async def export_orders(call: dict[str, Any]) -> dict[str, Any]:
    context = announce("orders.export_orders", call)
    batches = int(call["args"]["batches"])
    # A retried attempt starts where the last heartbeat of the previous one said it was.
    previous = activity.info().heartbeat_details
    start = int(previous[0]["done"]) if previous else 0
    try:
        for done in range(start, batches):
            # Heartbeats keep the attempt alive past its heartbeat timeout, and bring the
            # cancellation of the run: it is raised here as asyncio.CancelledError.
            activity.heartbeat({"done": done})
            await asyncio.sleep(0.2)
    except asyncio.CancelledError:
        emit("cancelled", tool="orders.export_orders", **context)
        raise
    return {"exported": batches, "resumedAt": start, "attempt": context["attempt"]}


async def main() -> None:
    parser = argparse.ArgumentParser(description="Serve Rewind host tools from Python.")
    parser.add_argument("--address", default="127.0.0.1:7233", help="Temporal frontend")
    parser.add_argument("--namespace", default="default", help="the namespace Rewind's runs live in")
    parser.add_argument("--task-queue", default="python-harness", help="the toolset's taskQueue for the group")
    options = parser.parse_args()

    client = await Client.connect(options.address, namespace=options.namespace)
    worker = Worker(
        client,
        task_queue=options.task_queue,
        activities=[create_order, find_customer, fetch_quote, export_orders],
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        emit("ready", taskQueue=options.task_queue, namespace=options.namespace)
        await stop.wait()
    print("stopped", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
