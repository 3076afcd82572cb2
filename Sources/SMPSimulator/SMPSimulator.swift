/// The simulated SMP device (Zephyr + MCUboot behaviour) and the ways it is served.
public enum SMPSimulator {}
