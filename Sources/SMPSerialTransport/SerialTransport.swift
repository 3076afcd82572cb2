/// SMP over a serial port.
public enum SMPSerialTransportModule {}
