"""Fair queuing of evaluations: who gets a seat next, on a clock the jobs advance."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import pytest

from predictive_scaler.operator.fairness import FairQueue


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


Job = tuple[str, str, float] | tuple[str, str, float, float]


async def run_jobs(queue: FairQueue, clock: Clock, jobs: Sequence[Job]) -> list[str]:
    """Queue every job behind a gate; each advances the clock by its cost. The order they ran.

    A fourth item is the job's due time: until then it may only run early.
    """
    ran: list[str] = []
    gate = asyncio.Event()

    async def hold_the_seats() -> None:
        async with contextlib.AsyncExitStack() as seats:
            for seat in range(queue.seats):
                await seats.enter_async_context(queue.seat("gate", str(seat)))
            await gate.wait()

    async def job(flow: str, member: str, cost: float, due_at: float | None = None) -> None:
        async with queue.seat(flow, member, due_at=due_at):
            ran.append(f"{flow}/{member}")
            clock.now += cost
            await asyncio.sleep(0)  # let the others queue while this one holds its seat

    holder = asyncio.create_task(hold_the_seats())
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(job(*spec)) for spec in jobs]
    # Each job queues within a turn or two of the loop; far more turns is a hang.
    for _ in range(10 * len(jobs) + 10):
        if queue.depth >= len(jobs):
            break
        await asyncio.sleep(0)
    else:
        raise AssertionError(f"{queue.depth} of {len(jobs)} jobs queued")
    gate.set()
    await asyncio.gather(holder, *waiting)
    return ran


def test_a_namespace_waits_behind_its_own_backlog_not_behind_anothers() -> None:
    async def scenario() -> list[str]:
        clock = Clock()
        queue = FairQueue(1, clock=clock)
        noisy = [("noisy", f"o{i}", 5.0) for i in range(10)]
        return await run_jobs(queue, clock, [*noisy, ("calm", "a", 0.1)])

    ran = asyncio.run(scenario())

    assert ran.index("calm/a") <= 1, ran


def test_within_a_namespace_the_work_due_longest_goes_first() -> None:
    async def scenario() -> list[str]:
        clock = Clock()
        queue = FairQueue(1, clock=clock)
        clock.now = 10.0
        jobs: list[Job] = [("ns", "b", 1.0, 8.0), ("ns", "c", 1.0, 9.0), ("ns", "a", 1.0, 2.0)]
        return await run_jobs(queue, clock, jobs)

    ran = asyncio.run(scenario())

    assert ran == ["ns/a", "ns/b", "ns/c"], ran


def test_one_expensive_turn_costs_an_object_no_later_turns() -> None:
    # Twenty objects of one namespace on one seat, each due again as soon as
    # its turn ends: one first turn twenty times the others' (a long history
    # read, a slow answer) must not hold that object back until every
    # neighbour has used as much seat-time.
    async def scenario() -> dict[str, int]:
        clock = Clock()
        queue = FairQueue(1, clock=clock)
        turns = {f"o{i}": 0 for i in range(20)}

        async def keep_asking(member: str) -> None:
            while clock.now < 3.0:
                async with queue.seat("ns", member, due_at=clock.now):
                    heavy_first = member == "o0" and turns[member] == 0
                    turns[member] += 1
                    clock.now += 0.2 if heavy_first else 0.01
                    await asyncio.sleep(0)

        await asyncio.gather(*(keep_asking(member) for member in turns))
        return turns

    turns = asyncio.run(scenario())
    others = [count for member, count in turns.items() if member != "o0"]

    assert turns["o0"] >= min(others) - 1, turns


def test_an_idle_namespace_banks_no_credit() -> None:
    async def scenario() -> list[str]:
        clock = Clock()
        queue = FairQueue(1, clock=clock)
        # busy runs alone for 100 s; quiet then arrives with as much work.
        await run_jobs(queue, clock, [("busy", f"o{i}", 10.0) for i in range(10)])
        jobs = [("busy", f"o{i}", 1.0) for i in range(4)]
        jobs += [("quiet", f"o{i}", 1.0) for i in range(4)]
        return await run_jobs(queue, clock, jobs)

    ran = asyncio.run(scenario())
    flows = [entry.split("/")[0] for entry in ran]

    # Interleaved from the start, not the quiet one first for 100 s of "credit".
    assert flows[:4].count("busy") == 2, flows


def test_due_turns_go_before_early_ones_that_queued_first() -> None:
    async def scenario() -> list[str]:
        clock = Clock()
        queue = FairQueue(1, clock=clock)
        early = [("ns", f"early{i}", 1.0, 100.0) for i in range(3)]
        return await run_jobs(queue, clock, [*early, ("ns", "due", 1.0)])

    ran = asyncio.run(scenario())

    assert ran == ["ns/due", "ns/early0", "ns/early1", "ns/early2"], ran


def test_an_early_turn_takes_a_seat_no_due_turn_wants_at_once() -> None:
    async def scenario() -> float:
        queue = FairQueue(1, clock=Clock())

        async def take() -> float:
            async with queue.seat("ns", "early", due_at=100.0) as waited:
                return waited

        # Granted on the spot, or never: the deadline only turns a hang into a failure.
        return await asyncio.wait_for(take(), timeout=10.0)

    assert asyncio.run(scenario()) == 0.0


def test_an_early_turn_competes_as_due_once_its_time_comes() -> None:
    async def scenario() -> list[str]:
        clock = Clock()
        queue = FairQueue(1, clock=clock)
        # "other" runs first and takes 5 s: by then "early" (due at 3 s) is due
        # and goes before "later" (due at 4 s), though that one queued first.
        jobs: list[Job] = [
            ("ns", "later", 1.0, 4.0),
            ("ns", "early", 1.0, 3.0),
            ("ns", "other", 5.0),
        ]
        return await run_jobs(queue, clock, jobs)

    ran = asyncio.run(scenario())

    assert ran == ["ns/other", "ns/early", "ns/later"], ran


def test_seats_are_bounded_and_freed_by_cancellation() -> None:
    async def scenario() -> tuple[int, int]:
        queue = FairQueue(2)
        inside = asyncio.Event()
        release = asyncio.Event()
        most = 0

        async def hold() -> None:
            nonlocal most
            async with queue.seat("ns", "holder"):
                most = max(most, queue.busy)
                inside.set()
                await release.wait()

        holders = [asyncio.create_task(hold()) for _ in range(3)]
        await inside.wait()
        await asyncio.sleep(0)
        assert queue.busy == 2
        assert queue.depth == 1
        for task in holders:
            task.cancel()
        await asyncio.gather(*holders, return_exceptions=True)
        return most, queue.busy + queue.depth

    most, left = asyncio.run(scenario())

    assert most == 2
    assert left == 0


def test_a_waiter_cancelled_as_a_seat_frees_is_passed_over_not_granted() -> None:
    # task.cancel() cancels the waiter's future at once, but its own cleanup runs
    # a turn later: a seat freed in between must go to the next live waiter,
    # and the one leaving it must not fail for the cancelled one (at shutdown,
    # or when an object is deleted, that failure hit an unrelated selection).
    async def scenario() -> tuple[BaseException | None, list[str], int]:
        queue = FairQueue(1)
        release = asyncio.Event()
        ran: list[str] = []

        async def job(name: str) -> None:
            async with queue.seat("ns", name):
                ran.append(name)
                if name == "holder":
                    await release.wait()

        holder = asyncio.create_task(job("holder"))
        await asyncio.sleep(0)
        cancelled, live = asyncio.create_task(job("cancelled")), asyncio.create_task(job("live"))
        await asyncio.sleep(0)
        assert queue.depth == 2
        release.set()  # the holder leaves on the next turn, before the cancelled one cleans up
        cancelled.cancel()
        outcomes = await asyncio.gather(holder, cancelled, live, return_exceptions=True)
        failure = outcomes[0] if isinstance(outcomes[0], BaseException) else None
        return failure, ran, queue.busy + queue.depth

    failure, ran, left = asyncio.run(scenario())

    assert failure is None
    assert ran == ["holder", "live"]
    assert left == 0


def test_one_namespace_may_hold_every_seat_at_once_and_give_them_all_back() -> None:
    async def scenario() -> tuple[int, list[str]]:
        clock = Clock()
        queue = FairQueue(2, clock=clock)
        # First turns: no estimate yet, so two items of one flow run with nothing pending.
        ran = await run_jobs(queue, clock, [("ns", f"o{i}", 0.0) for i in range(6)])
        ran += await run_jobs(queue, clock, [("ns", f"o{i}", 1.0) for i in range(6)])
        return queue.busy, ran

    busy, ran = asyncio.run(scenario())

    assert busy == 0
    assert len(ran) == 12


def test_no_seats_is_refused() -> None:
    with pytest.raises(ValueError, match="seats"):
        FairQueue(0)
