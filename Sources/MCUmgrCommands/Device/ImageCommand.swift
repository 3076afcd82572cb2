import ArgumentParser

/// `mcumgr image …`: the image-management group (1) and local image inspection.
struct ImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image",
        abstract: "Image management: list, upload, test, confirm, erase, slots; and info on a local file.",
        subcommands: [
            ImageCommands.List.self, ImageCommands.Upload.self, ImageCommands.Test.self, ImageCommands.Confirm.self,
            ImageCommands.Erase.self, ImageCommands.Slots.self, ImageInfoCommand.self,
        ]
    )
}
