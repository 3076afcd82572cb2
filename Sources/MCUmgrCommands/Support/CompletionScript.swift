import ArgumentParser
import Foundation

/// `mcumgr --generate-completion-script SHELL`, made for how people type `mcumgr`: global
/// options before the command (`mcumgr --conn udp://host image li<TAB>`).
///
/// swift-argument-parser writes the script from a command tree. The real tree declares the
/// global options on each verb (the root moves them there), so a script written from it would
/// take `--conn` for the command; the script is written from ``Tree``, the same commands with the
/// global options declared at the root too, which the generated scripts then skip with their
/// values. Bash needs one more step: it splits the words it hands a completion function at
/// `COMP_WORDBREAKS`, `:` and `=` included, so `--conn udp://host` arrives as `--conn`, `udp`,
/// `:`, `//host`; a wrapper splits the line at whitespace only before calling the generated
/// function.
enum CompletionScript {
    /// The command tree as the completion scripts see it. Never parsed.
    struct Tree: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mcumgr",
            subcommands: MCUmgrCommand.configuration.subcommands
        )
        @OptionGroup var global: GlobalOptions
    }

    /// The script asked for by `--generate-completion-script SHELL` (or `=SHELL`), if that is
    /// what the arguments ask; `nil` for anything else, an unknown shell included (the parser
    /// then says what is wrong).
    /// - Parameter arguments: the command line after the program name.
    static func requested(in arguments: [String]) -> String? {
        let option = "--generate-completion-script"
        guard let index = arguments.firstIndex(where: { $0 == option || $0.hasPrefix(option + "=") }) else {
            return nil
        }
        let word = arguments[index]
        let name = word.contains("=") ? String(word.dropFirst(option.count + 1)) : arguments.dropFirst(index + 1).first
        guard let name, let shell = CompletionShell(rawValue: name) else { return nil }
        return adjusted(Tree.completionScript(for: shell))
    }

    /// The values a completion script asks for (`mcumgr ---completion -- -c …`, for profile names),
    /// or `nil` when the arguments ask for none. The script names options as ``Tree`` declares them
    /// (the global ones at the root), so ``Tree`` answers, not the real command tree.
    /// - Parameter arguments: the command line after the program name.
    static func customCompletions(for arguments: [String]) -> String? {
        guard arguments.first == "---completion" else { return nil }
        do {
            _ = try Tree.parseAsRoot(arguments)
            return ""
        } catch {
            // The parser hands the completions back as the message of the error it throws.
            return Tree.exitCode(for: error) == .success ? Tree.fullMessage(for: error) : ""
        }
    }

    /// The generated bash script's last line, which registers the completion function.
    static let bashRegistration = "complete -o filenames -F _mcumgr mcumgr"

    /// The script with, for bash, the wrapper registered instead; other shells' unchanged.
    /// - Parameter generated: swift-argument-parser's script for any shell.
    static func adjusted(_ generated: String) -> String {
        guard let range = generated.range(of: bashRegistration, options: .backwards) else { return generated }
        return generated.replacingCharacters(in: range, with: bashWrapper)
    }

    static let bashWrapper = """
        # Added by mcumgr: bash splits words at COMP_WORDBREAKS (':' and '=' among them), so
        # `--conn udp://host` would reach _mcumgr as `--conn udp : //host`. Split the line at
        # whitespace only, then complete as the generated function does.
        _mcumgr_whole_words() {
            local line="${COMP_LINE:0:COMP_POINT}"
            local -a COMP_WORDS
            read -ra COMP_WORDS <<<"${line}"
            [[ -z "${line}" || "${line}" =~ [[:space:]]$ ]] && COMP_WORDS+=("")
            local -i COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            _mcumgr "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        }

        complete -o filenames -F _mcumgr_whole_words mcumgr
        """
}
