"""When an object's next evaluation is due: a rhythm that absorbs a one-off delay.

Timing the next turn a period after the last one *started* lets every wait
for a worker push all later turns back: one burst in the queue and the object
is late for good, by a period plus the wait. Timing it a period after the
last one was *due* catches a delay up, but under a sustained backlog that
asks the queue for more turns than it can serve, and every turn ends up late
(measured on 1,000 objects: the saturated namespace went from 19 % of objects
within +10 % of their period to 0 %).

So a late turn is caught up only when the turn before it was on time (a
one-off delay, which the queue has room to absorb), and by at most half a
period; after two late turns in a row the rhythm stretches to what the queue
can serve, which adds no demand. A turn that starts early (a new model
arrived) starts a new rhythm, and so does the first turn: there is no rhythm
yet to catch up with, only a start-up queue.

A new model wakes the object early only when its next turn is more than half
a period away; nearer, that turn uses the model anyway. Every early turn is
one more for the queue, and they come in waves: at start-up every object's
first selection lands within minutes. So an early turn also waits for a seat
that no due turn wants (:mod:`.fairness`): the wave is served from spare
seats, and a namespace whose objects re-select often cannot make the others'
turns late (the load benchmark's calm objects, 98 % to 100 % within their
period). On 1,000 `auto` objects every gap between turns is then within the
period + 2 %, start-up included.
"""

from __future__ import annotations

from dataclasses import dataclass

from predictive_scaler.operator.conditions import Lateness

# Later than this share of a period counts as late for the catch-up rule;
# it is the tolerance the load benchmark holds evaluations to.
ON_TIME_SHARE = 0.1
# At most this share of a period is caught up at once.
CATCH_UP_SHARE = 0.5


@dataclass
class Cadence:
    due: float
    late_in_a_row: int = 0  # over half a period late, for EvaluationsLate
    last_duration: float = 0.0
    # The last turn started on time, so a late one now is a one-off delay.
    in_rhythm: bool = False

    def started(self, now: float, waited: float, period: float) -> Lateness:
        late = max(0.0, now - self.due)
        self.late_in_a_row = self.late_in_a_row + 1 if late > period / 2 else 0
        return Lateness(late, min(waited, late), period, self.late_in_a_row, self.last_duration)

    def takes_wake(self, now: float, period: float) -> bool:
        """Whether a new model is worth a turn now rather than at the one due."""
        return self.due - now > CATCH_UP_SHARE * period

    def finished(self, began: float, period: float) -> None:
        """Set when the next turn is due, given when this one began."""
        late = began - self.due
        on_time = late <= ON_TIME_SHARE * period
        if late < 0:
            anchor = began  # woken early: a new rhythm from here
        elif on_time or self.in_rhythm:
            anchor = max(self.due, began - CATCH_UP_SHARE * period)
        else:
            anchor = began  # a backlog, or the first turn: go on from here
        self.in_rhythm = on_time
        self.due = anchor + period
