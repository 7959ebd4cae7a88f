"""A runtime's link to the floor ([floor] in its config): its journal streamed there, and, at a regulated site, no new play while the floor is away.

controller/runtime.py's Runtime derives from FloorLink: it starts the link once its journal is open (`_start_floor`)
and its subclasses (the table, the cabinet) journal the stop and its end (`_floor_lost`, `_floor_back`) and refuse
their new-play commands with `_floor_refusal`. The replicator itself is controller/floor/replicator.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from controller.runtime import Batch

__all__ = ["FloorLink", "FLOOR_CHECK_S"]

FLOOR_CHECK_S = 5.0       # how often a machine with [floor] stop_play_after looks at how long the floor is away


class FloorLink:
    """The floor's part of a runtime (the attributes and writer it uses are the Runtime's)."""

    journal_path: Path
    clock: Callable[[], float]
    replicator: Any  # controller.floor.replicator.Replicator when the config has a [floor]
    _tasks: list[asyncio.Task[Any]]

    if TYPE_CHECKING:
        def _post(self, handler: Callable[[Batch], Any]) -> None: ...

        async def _submit(self, handler: Callable[[Batch], Any]) -> Any: ...

    def _start_floor(self) -> None:
        """Stream the journal to the floor when the config has a [floor]; play never waits for it."""
        floor = getattr(getattr(self, "config", None), "floor", None)
        if floor is not None:
            from controller.floor.replicator import Replicator

            self.replicator = Replicator(self.journal_path, floor.subject, floor.servers, credentials=floor.credentials,
                                         clock=self.clock)
            self._tasks.append(asyncio.create_task(self.replicator.run()))
            if getattr(floor, "stop_play_after", None) is not None:
                self._tasks.append(asyncio.create_task(self._floor_watch()))

    # A regulated site's [floor] stop_play_after: no new round or spin once the floor has been away that long.
    # The subclass journals the stop (a lockup, an alert) and its end, and refuses its new-play commands.

    def floor_stop(self) -> str | None:
        """Why no new round or spin may start for want of the floor (None: it may)."""
        floor = getattr(getattr(self, "config", None), "floor", None)
        if self.replicator is None or floor is None or getattr(floor, "stop_play_after", None) is None:
            return None
        from controller.floor.replicator import stop_play_reason

        return stop_play_reason(self.replicator.status, floor.stop_play_after, self.clock())

    def _floor_refusal(self) -> str | None:
        """floor_stop() for a new-play command; when it refuses, the stop is journaled next (in a batch of its own:
        a refusal undoes its command's records)."""
        reason = self.floor_stop()
        if reason is not None:
            self._post(lambda batch: self._floor_gate(batch, refused=True))
        return reason

    async def floor_check(self) -> None:
        """Journal the floor stop once it is due, and its end once the floor answers again."""
        await self._submit(self._floor_gate)

    def _floor_gate(self, batch: Batch, refused: bool = False) -> None:
        reason = self.floor_stop()
        if reason is not None:
            self._floor_lost(batch, reason, refused)
        elif self.replicator is not None and self.replicator.status.reachable:
            self._floor_back(batch)

    def _floor_lost(self, batch: Batch, reason: str, refused: bool) -> None:
        """Journal that play stopped for want of the floor (a table's alert, a cabinet's lockup), once; `refused`:
        a new round or spin was just refused for it."""

    def _floor_back(self, batch: Batch) -> None:
        """Journal that the floor is back and play may resume."""

    async def _floor_watch(self) -> None:
        while True:
            await asyncio.sleep(FLOOR_CHECK_S)  # a periodic check in service, not a synchronisation
            await self.floor_check()
