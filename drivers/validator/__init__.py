"""Bill validators: what a validator tells the cabinet (events.py), the JCM ID-003 protocol over serial, and a simulated validator on a pty."""

from .events import (Escrowed, PoweredUp, Rejected, Returned, Stacked, ValidatorCleared, ValidatorEvent,
                     ValidatorFault, ValidatorLink, VALIDATOR_FAULTS)

__all__ = ["Escrowed", "PoweredUp", "Rejected", "Returned", "Stacked", "ValidatorCleared", "ValidatorEvent",
           "ValidatorFault", "ValidatorLink", "VALIDATOR_FAULTS"]
