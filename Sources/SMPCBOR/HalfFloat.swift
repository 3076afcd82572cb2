/// IEEE 754 binary16 conversions done by hand: `Float16` is not available on every platform we
/// build for (Intel Macs), and CBOR needs exact, not rounded, conversions.
enum HalfFloat {
    /// Widens binary16 bits to a double; exact for every input, NaN payloads included in spirit
    /// (the quiet bit and payload are carried into the double's mantissa).
    static func double(fromBits bits: UInt16) -> Double {
        let sign: Double = bits & 0x8000 != 0 ? -1 : 1
        let exponent = Int((bits >> 10) & 0x1f)
        let mantissa = Int(bits & 0x3ff)
        switch exponent {
        case 0:
            return sign * Double(mantissa) * 0x1p-24
        case 0x1f:
            if mantissa == 0 { return sign * .infinity }
            let payload = UInt64(mantissa) << 42
            return Double(bitPattern: (bits & 0x8000 != 0 ? 1 << 63 : 0) | 0x7ff0_0000_0000_0000 | payload)
        default:
            return sign * (1 + Double(mantissa) * 0x1p-10)
                * Double(sign: .plus, exponent: exponent - 15, significand: 1)
        }
    }

    /// The binary16 bits of `value` if it converts to half precision with no loss, else `nil`.
    static func bits(exactly value: Double) -> UInt16? {
        if value.isNaN {
            // Keep the quiet bit and the top of the payload; only an exact payload round trip counts.
            let payload = value.bitPattern & 0x000f_ffff_ffff_ffff
            guard payload & ((1 << 42) - 1) == 0 else { return nil }
            let sign: UInt16 = value.sign == .minus ? 0x8000 : 0
            return sign | 0x7c00 | UInt16(payload >> 42)
        }
        let sign: UInt16 = value.sign == .minus ? 0x8000 : 0
        if value.isInfinite { return sign | 0x7c00 }
        if value == 0 { return sign }
        let magnitude = abs(value)
        let exponent = Int(magnitude.exponent)
        if exponent < -24 || exponent > 15 { return nil }
        if exponent < -14 {
            // Subnormal half: value = m × 2⁻²⁴ with m < 1024.
            let scaled = magnitude * 0x1p24
            guard scaled == scaled.rounded(), scaled < 1024 else { return nil }
            return sign | UInt16(scaled)
        }
        let significand = magnitude.significand  // in [1, 2)
        let mantissa = (significand - 1) * 1024
        guard mantissa == mantissa.rounded() else { return nil }
        return sign | UInt16(exponent + 15) << 10 | UInt16(mantissa)
    }

    /// Rounds to the nearest binary16 (ties to even); for encoding a value forced to half width.
    static func bitsRounded(_ value: Double) -> UInt16 {
        if let exact = bits(exactly: value) { return exact }
        if value.isNaN { return 0x7e00 }
        let sign: UInt16 = value.sign == .minus ? 0x8000 : 0
        let magnitude = abs(value)
        if magnitude >= 65520 { return sign | 0x7c00 }
        if magnitude < 0x1p-14 {
            return sign | UInt16((magnitude * 0x1p24).rounded(.toNearestOrEven))
        }
        let exponent = Int(magnitude.exponent)
        let mantissa = ((magnitude.significand - 1) * 1024).rounded(.toNearestOrEven)
        // A mantissa that rounds up to 1024 carries into the exponent; the addition does that.
        return sign | (UInt16(exponent + 15) << 10 + UInt16(mantissa))
    }
}
