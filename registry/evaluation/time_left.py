"""The time a run has left, as its progress says it: `~2:06 left` on the CLI's plain line and
bar, `about 2 min left` on the Space's Evaluate progress.

`elapsed / done * left` counts the start-up (loading a model, the first connections) in the
pace of the whole run, and with concurrent calls the answers come in waves, so the estimate
grew and jumped between lines. Here instead:

- The pace is the slope of a straight line fitted to when the recent half of the answers came
  (answer number -> time): a wave of answers is a step that the line goes through, not a burst
  of instant ones, and the start-up is not in it (nor a slow start, after twice as many fast
  answers). A silence longer than any gap in that half (a stall, not the wait between waves)
  counts as an answer coming now, so a stalled run's estimate grows, as it should.
- No estimate until `MIN_ANSWERS` are in and they span as long as the first one took (at most
  `WARM_UP_S`): the first wave alone says nothing of the pace.
- A lower estimate is shown at once; a higher one only when it is over the last one shown,
  counted down since, by more than `GROWTH`: waves and jitter never make it grow, a real
  slowdown does.
"""

from __future__ import annotations

from itertools import pairwise

MIN_ANSWERS = 4
WARM_UP_S = 10.0
BAND = 1.2


def clock_text(seconds: float) -> str:
    """`1:05`, `12:00`, `1:02:03`: elapsed or remaining time."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return (f"{hours}:" if hours else "") + f"{rest // 60:0{2 if hours else 1}d}:{rest % 60:02d}"


class TimeLeft:
    """Seconds a run has left, from when each of its answers came (see the module's text)."""

    def __init__(self, begun: float) -> None:
        self.begun = begun
        self.times: list[float] = []  # when each answer came, in order
        self.shown: tuple[float, float] | None = None  # (seconds left, when) last shown

    def answered(self, done: int, now: float) -> None:
        """`done` answers are in, the new ones at `now`."""
        self.times.extend([now] * (done - len(self.times)))

    def left(self, total: int, now: float) -> float | None:
        """The seconds left to get `total` answers, or None when too little is known yet."""
        done = len(self.times)
        first = self.times[0] if self.times else now
        if done < MIN_ANSWERS or done >= total or \
                now - first < min(first - self.begun, WARM_UP_S):
            return None
        estimate = _pace(self.times[done // 2 - 1:], now) * (total - done)
        if self.shown is not None:
            counted = self.shown[0] - (now - self.shown[1])
            if 0 < counted / BAND <= estimate <= counted * BAND:
                return counted  # not clearly off: the last estimate, counted down
        self.shown = (estimate, now)
        return estimate


def _pace(times: list[float], now: float) -> float:
    """Seconds per answer: the least-squares slope of `times` over their answer numbers, with
    an answer at `now` when the silence since the last is longer than any gap among them."""
    gaps = [later - earlier for earlier, later in pairwise(times)]
    points = [*times, now] if now - times[-1] > max(gaps, default=0.0) else times
    mean_i, mean_t = (len(points) - 1) / 2, sum(points) / len(points)
    spread = sum((i - mean_i) ** 2 for i in range(len(points)))
    return sum((i - mean_i) * (t - mean_t) for i, t in enumerate(points)) / spread
