import MCUboot

/// MCUboot at boot: recovery entry, then per image its decision (swap, overwrite, pick the highest
/// version), then validation of what would run.
extension MCUbootModel {
    /// Boots: applies MCUboot's decision, as at reset or power-on.
    ///
    /// The order is MCUboot's (`boot/zephyr/main.c`): the recovery button before anything else,
    /// then the boot decision (swaps happen here), then the retention boot mode, then — with
    /// nothing valid to boot — recovery if built to fall back on it, else a halt. In the
    /// firmware-loader mode the button, the boot mode or an invalid application start the loader.
    /// - Parameters:
    ///   - interruptingSwap: lose power at this step of the swaps and copies this boot makes
    ///     (counted across images; ``lastSwapSteps`` says how many there were): the progress is
    ///     recorded (MCUboot's swap status area), the next boot resumes it, and this boot runs
    ///     nothing.
    ///   - request: a boot mode or the recovery button asking to stop in recovery.
    /// - Returns: the number of bytes swapped or copied (for timing).
    @discardableResult
    public mutating func boot(interruptingSwap: Int? = nil, request: BootRequest = .normal) -> Int {
        var log: [String] = []
        var countdown = interruptingSwap
        lastSwapSteps = 0
        lastBootInterrupted = false
        defer { lastBootLog = log }
        if mode == .firmwareLoader {
            bootWithLoader(request, log: &log)
            return 0
        }
        let recovery = recoveryEntry.serialRecovery && mode != .none
        if request == .button && recovery {
            stage = .serialRecovery
            log.append("recovery button held: serial recovery")
            return 0
        }
        var moved = 0
        var running = true
        for image in 0..<slots.count {
            switch mode {
            case .swapUsingScratch, .swapUsingMove, .swapUsingOffset:
                guard let swapped = performSwap(image: image, countdown: &countdown, log: &log) else {
                    stage = .halted
                    return moved
                }
                moved += swapped
            case .overwriteOnly:
                guard let copied = performOverwrite(image: image, countdown: &countdown, log: &log) else {
                    stage = .halted
                    return moved
                }
                moved += copied
            case .directXIP, .directXIPWithRevert, .ramLoad:
                selectDirectXIP(image: image, log: &log)
            case .singleSlot:
                log.append("image \(image): single slot")
            case .firmwareLoader:
                break
            case .none:
                log.append("image \(image): no bootloader; nothing swapped")
            }
            let active = activeSlots[image]
            if !isValid(slots[image][active].data) {
                log.append("image \(image): no bootable image in slot \(active)")
                running = false
            }
        }
        if request == .bootMode && recovery && recoveryEntry.bootMode {
            stage = .serialRecovery
            log.append("boot mode: serial recovery")
        } else if running {
            stage = .application
        } else if recovery && recoveryEntry.withoutApplication {
            stage = .serialRecovery
            log.append("nothing to boot: serial recovery")
        } else {
            stage = .halted
            log.append("nothing to boot: halted")
        }
        return moved
    }

    /// The firmware-loader mode (`boot/zephyr/firmware_loader.c`): a request (button, boot mode)
    /// starts a valid loader; otherwise a valid application runs; otherwise the loader if MCUboot
    /// falls back on it.
    private mutating func bootWithLoader(_ request: BootRequest, log: inout [String]) {
        let loaderValid = loader.map { isValid($0.data) } ?? false
        let asked = request == .button || (request == .bootMode && recoveryEntry.bootMode)
        let applicationValid = (0..<slots.count).allSatisfy { isValid(slots[$0][0].data) }
        if asked && loaderValid {
            stage = .firmwareLoader
            log.append("\(request == .button ? "button" : "boot mode"): firmware loader")
        } else if applicationValid {
            stage = .application
            log.append("application")
        } else if loaderValid && recoveryEntry.withoutApplication {
            stage = .firmwareLoader
            log.append("no valid application: firmware loader")
        } else {
            stage = .halted
            log.append("nothing to boot: halted")
        }
    }

    /// With downgrade prevention, why the secondary image may not replace the primary: its
    /// version (major.minor.revision, as MCUboot compares without the build number option) is
    /// lower. An equal version is allowed.
    func refusedDowngrade(image: Int) -> String? {
        guard downgradePrevention, let new = self.image(image, slot: 1)?.header.version,
            let current = self.image(image, slot: 0)?.header.version, new.withoutBuild < current.withoutBuild
        else { return nil }
        return "downgrade \(current) → \(new) refused"
    }

    private mutating func selectDirectXIP(image: Int, log: inout [String]) {
        if mode == .directXIPWithRevert {
            for slot in 0..<slots[image].count {
                let trailer = slots[image][slot].trailer
                if trailer.magic && trailer.copyDone && !trailer.imageOK {
                    slots[image][slot] = .erased
                    log.append("image \(image): slot \(slot) was tested and not confirmed, erased")
                }
            }
        }
        let chosen = directXIPNextSlot(image: image)
        activeSlots[image] = chosen
        if mode == .directXIPWithRevert {
            var trailer = slots[image][chosen].trailer
            if trailer.magic && !trailer.imageOK { trailer.copyDone = true }
            slots[image][chosen].trailer = trailer
        }
        log.append("image \(image): \(mode == .ramLoad ? "load slot \(chosen) into RAM" : "boot slot \(chosen)")")
    }
}
