"""Bill validators: what a validator tells the cabinet (events.py), the JCM ID-003 protocol over serial, and a simulated validator on a pty.

    from drivers.validator import AsyncValidator, ValidatorDriver, ValidatorSim, validator_config
    (README.md beside this file has the details)
"""

from .aio import AsyncValidator
from .config import ValidatorConfig, validator_config
from .driver import DriverTiming, ValidatorDriver
from .events import (Escrowed, PoweredUp, Rejected, Returned, Stacked, ValidatorCleared, ValidatorEvent,
                     ValidatorFault, ValidatorLink, VALIDATOR_FAULTS)
from .protocol import Item
from .sim import SimError, ValidatorSim

__all__ = ["Escrowed", "PoweredUp", "Rejected", "Returned", "Stacked", "ValidatorCleared", "ValidatorEvent",
           "ValidatorFault", "ValidatorLink", "VALIDATOR_FAULTS", "AsyncValidator", "ValidatorDriver",
           "DriverTiming", "ValidatorSim", "SimError", "ValidatorConfig", "validator_config", "Item"]
