/// SMP over UDP.
public enum SMPUDPTransportModule {}
