"""Card shoe and shuffler on a serial line: wire protocol, host driver, asyncio adapter, simulated device.

The runtime's entry points (details in README.md beside this file):

    from drivers.shoe import ShoeDriver, AsyncShoe, ShoeSim, LinkConfig
    from drivers.shoe import CardDrawn, ShoeState, DeckCheck, Shuffle, DeviceError, LinkUp, LinkDown, Anomaly
    from drivers.shoe import CounterReset
"""

from .aio import AsyncShoe
from .device import DeviceTiming
from .driver import ShoeDriver
from .link import COUNTERS, Anomaly, CommandFailed, CounterReset, LinkConfig, LinkDown, LinkDownError, LinkUp
from .protocol import CardDrawn, DeckCheck, DeviceError, ErrorCode, Identify, ShoeState, Shuffle, StateFlags
from .sim import Faults, ShoeSim, SimError

__all__ = ["ShoeDriver", "AsyncShoe", "ShoeSim", "Faults", "SimError", "LinkConfig", "DeviceTiming",
           "CardDrawn", "ShoeState", "DeckCheck", "Shuffle", "DeviceError", "ErrorCode", "Identify", "StateFlags",
           "LinkUp", "LinkDown", "Anomaly", "CounterReset", "LinkDownError", "CommandFailed", "COUNTERS"]
