"""Panel I/O over GPIO (gpiozero): buttons, doors, coin pulses, lamps, tower light, MAX7219 displays; simulated too.

The runtime's whole use of it::

    config = load_panel_config("/etc/croupier/table.toml")     # the [panel] section; errors name the key
    panel = open_panel(config)                                 # inside the runtime's asyncio loop
    panel.start(queue.put_nowait)                              # events arrive on the loop thread
    panel.light_spot(3, "betting_open"); panel.show("credit", 1250); panel.flash_win()
    ...
    panel.close()
"""

from .clock import Clock, LoopClock, ManualClock
from .config import PanelConfig, PanelConfigError, load_panel_config, panel_config_from_mapping, wiring_markdown
from .events import (ButtonHeld, ButtonPressed, ButtonReleased, DoorClosed, DoorOpened, InputFreed, InputStuck,
                     PanelEvent, PulseCounted, PulseRejected, SwitchOff, SwitchOn)
from .panel import Panel, PanelError, open_panel

__all__ = [
    "Clock", "LoopClock", "ManualClock",
    "PanelConfig", "PanelConfigError", "load_panel_config", "panel_config_from_mapping", "wiring_markdown",
    "PanelEvent", "ButtonPressed", "ButtonReleased", "ButtonHeld", "DoorOpened", "DoorClosed", "SwitchOn",
    "SwitchOff", "PulseCounted", "PulseRejected", "InputStuck", "InputFreed",
    "Panel", "PanelError", "open_panel",
]
