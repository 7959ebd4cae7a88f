"""The Raspberry Pi's 40-pin header: which GPIO is at which pin, what the buses and the HAT EEPROM claim, and a pin's label."""

from __future__ import annotations

__all__ = ["HEADER", "PHYSICAL", "GPIO_MAX", "ALWAYS_RESERVED", "BUSES", "HARDWARE_SPI", "pin_label"]

# The Raspberry Pi 40-pin header (every model since the B+): physical pin -> GPIO number, or what the pin is.
HEADER: dict[int, int | str] = {
    1: "3V3 power", 2: "5V power", 3: 2, 4: "5V power", 5: 3, 6: "ground", 7: 4, 8: 14, 9: "ground", 10: 15,
    11: 17, 12: 18, 13: 27, 14: "ground", 15: 22, 16: 23, 17: "3V3 power", 18: 24, 19: 10, 20: "ground",
    21: 9, 22: 25, 23: 11, 24: 8, 25: "ground", 26: 7, 27: 0, 28: 1, 29: 5, 30: "ground",
    31: 6, 32: 12, 33: 13, 34: "ground", 35: 19, 36: 16, 37: 26, 38: 20, 39: "ground", 40: 21,
}
PHYSICAL: dict[int, int] = {gpio: physical for physical, gpio in HEADER.items() if isinstance(gpio, int)}
GPIO_MAX = 27

# GPIO0/1 carry the HAT identification EEPROM; the firmware reads them at boot, so nothing else may.
ALWAYS_RESERVED: dict[int, str] = {0: "the HAT ID EEPROM (ID_SD)", 1: "the HAT ID EEPROM (ID_SC)"}
BUSES: dict[str, dict[int, str]] = {
    "uart": {14: "the serial UART (TXD)", 15: "the serial UART (RXD)"},
    "i2c": {2: "I2C (SDA)", 3: "I2C (SCL)"},
    # The kernel's spi0 overlay claims both chip selects and MISO even when a display uses only CE0 and MOSI.
    "spi0": {7: "SPI0 (CE1)", 8: "SPI0 (CE0)", 9: "SPI0 (MISO)", 10: "SPI0 (MOSI)", 11: "SPI0 (SCLK)"},
}
HARDWARE_SPI = {"spi0": (11, 10, 8), "spi0.1": (11, 10, 7)}  # bus -> (clock, data/MOSI, select)


def pin_label(gpio: int) -> str:
    """'GPIO17 (pin 11)': the BCM number with its place on the header."""
    return f"GPIO{gpio} (pin {PHYSICAL[gpio]})"
