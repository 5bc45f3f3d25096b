"""The documentation says what the tools do: one truth for --help, man pages and completions.

For every tool that has a man page in man/ and a built binary (the `tool`
fixture: $SOCIALPIPE_BIN, else .build/release), the long and short options
that `--help` lists are exactly those of the man page's OPTIONS section and
those the bash, zsh and fish completions offer, and the fixed choices of
--format, --api, --access and --plan agree everywhere, and so do the Graph
API versions that --graph-version offers (each accepted by the tool, the
default among them).
The names the completions offer as arguments are the same in every shell and
each one is a name the tool asks the API about (fb-perm-check's permissions),
and what -q does (quiet: hide the progress line and the input reminder, or,
for fb-perm-check, all of stdout too) is what --help, the man page and the
fish descriptions say, each saying that messages on stderr still appear. A tool
whose binary is not built yet is skipped, saying so. Every page passes `mandoc -Tlint -W style`; the README
names the two first-run commands; socialpipe.7 lists the contract's exit
statuses; socialpipe-prices.5 lists exactly the price keys tw-post and
tw-friends know, each at the price they charge without a prices file;
`make install` puts every page (sections 1, 5 and 7) and every completion
in place, and `make uninstall` takes them all away. The README's first hour
holds: bash finds completions under another PREFIX with the line it gives;
the demo writes no terminal escapes to a file; the sandbox credentials file
is ignored by git; the sandbox run without the venv's packages says to use
the venv; a null redirect in the be-the-browser step is explained in the
sandbox's own words. The README's many-processes recipe (GNU parallel with
--first-line) runs as written and gives the output of one process.

The interactive tools (tw-auth, fb-auth) take a command as their first
argument instead of records (`Usage: tw-auth COMMAND`): the commands the tool
accepts are those --help lists, the man page's COMMANDS section lists, and
every shell offers as the first argument, and nothing after it; an option
--help gives to one command (`pin: ...`) says so in the man page too, and
the completions offer it only before a command is typed or after that one.

The completions are exercised, not grepped: bash through its completion
function, zsh through a real completion widget in a pseudo-terminal, fish
through `complete -C`. In each, --profile offers the profiles of the
credentials file in use; zsh and fish get that from one shared function
(completions/zsh/_socialpipe_profiles, autoloaded from fpath, and
completions/fish/functions/, put on fish_function_path as an installed
vendor_functions.d is), which the Makefile installs along with the completions.
"""
import functools
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAN = ROOT / "man"
COMPLETIONS = ROOT / "completions"
README = ROOT / "README.md"
MAKEFILE = ROOT / "Makefile"

TOOLS = sorted(p.stem for p in MAN.glob("*.1"))
PAGES = sorted(p.name for p in MAN.iterdir() if re.fullmatch(r".+\.[1-9]", p.name))
# Options whose value is one of a fixed set, wherever a tool has them.
CHOICE_OPTIONS = ("format", "api", "access", "plan")
# The Graph tools' version option: any vNN.0 is accepted, so the completions
# offer the versions Meta serves and the man page names the default.
GRAPH_VERSION_OPTION = "graph-version"
# Tools whose arguments are names from the API's vocabulary, with the field
# an argument fills: the completions offer the same names in every shell, and
# the tool takes each as a name it asks the API about (not a removed one).
ARGUMENT_VOCABULARY = {"fb-perm-check": "permission"}
# Where a tool keeps that vocabulary: the completions ask it with this option, and
# hold no copy of their own.
VOCABULARY_OPTION = {"fb-perm-check": "--list-permissions"}
# Contract §5: -q hides the progress line; fb-perm-check's writes nothing on
# stdout either, as grep -q, and its docs must say which.
QUIET_OPTION = "quiet"
# --profile completes the profile names of the credentials file in use
# (--credentials, else $SOCIALPIPE_CREDENTIALS, else the XDG default), in
# every shell; fish's completions share one autoloaded function for it.
PROFILE_OPTION = "profile"
# The page of the prices file (contract §7): its KEYS section gives each key
# as `.It Cm KEY` and its built-in price first, `0.015: a post ...`.
PRICES_PAGE = "socialpipe-prices.5"
# Contract §3 (docs/contract.md): 0, 1, 2, 3, 130/143, and 141 for a closed stdout.
CONTRACT_EXIT_STATUSES = {0, 1, 2, 3, 130, 141, 143}
# Statuses the tools have and the contract does not have yet: issue 7 made
# SIGHUP end a run like SIGTERM, with 129, and its note proposes the text.
PROPOSED_EXIT_STATUSES = {129}
BASH_COMPLETION = pathlib.Path("/usr/share/bash-completion/bash_completion")
# The functions fish's completions share, installed in vendor_functions.d.
FISH_FUNCTIONS = COMPLETIONS / "fish" / "functions"
TIMEOUT = 60
# A command line of an interactive tool that sends nothing and asks nothing:
# `status` of a profile the credentials file does not have stops with a
# configuration error (exit 3), after the options were checked (exit 2).
NO_SUCH_PROFILE = "docs-test-no-such-profile"
CHECK_COMMAND = ("status", "--profile", NO_SUCH_PROFILE)


# --------------------------------------------------------------------------------------
# what --help says
# --------------------------------------------------------------------------------------

def built(tool, name):
    path = tool(name)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip("%s is not built (no executable at %s); its docs are checked once it is"
                    % (name, path))
    return path


def run(argv, env=None, **kwargs):
    env = dict(env or os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL, env=env, **kwargs)


def option_names(words):
    """(long names, short letters) among option words such as --format, --format=, -h."""
    longs = {w[2:].rstrip("=") for w in words if w.startswith("--") and len(w) > 2}
    shorts = {w[1] for w in words if re.fullmatch(r"-[A-Za-z0-9]", w)}
    return longs, shorts


def help_text(path):
    p = run([path, "--help"])
    assert p.returncode == 0, p.stderr
    return p.stdout


def help_options(path):
    """Options of the --help 'Options:' block: lines like '  -j, --parallel N  text'."""
    words = []
    block = help_text(path).split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    for line in block.splitlines():
        m = re.match(r"\s+(?:(-[A-Za-z0-9]),\s+)?(--[A-Za-z0-9][A-Za-z0-9-]*)", line)
        assert m, "unexpected line in the Options block of --help: %r" % line
        words += [w for w in m.groups() if w]
    return option_names(words)


def tool_commands(path):
    """The commands of an interactive tool, whose --help usage line is
    `Usage: NAME COMMAND ...`: those its usage error for a missing command
    lists. None for a filter."""
    if not re.match(r"Usage: \S+ COMMAND\b", help_text(path)):
        return None
    p = run([path])
    assert p.returncode == 2, "no command: exit status %d, not 2: %s" % (p.returncode, p.stderr)
    m = re.search(r"no command: give one of (.+)", p.stderr)
    assert m, "no list of commands in: %r" % p.stderr
    return tuple(re.split(r",\s*|\s+or\s+", m.group(1).strip()))


def help_listed_commands(path):
    """The commands --help describes before its options: lines like '  pin   text'."""
    summary = help_text(path).split("\nOptions:\n", 1)[0]
    return set(re.findall(r"(?m)^  ([a-z][a-z0-9-]*)\s{2,}\S", summary))


def help_command_options(path, commands):
    """{long option: command} for the options --help gives to one command
    (`--all  status: check every profile`)."""
    scoped = {}
    block = help_text(path).split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    for line in block.splitlines():
        m = re.match(r"\s+(?:-[A-Za-z0-9],\s+)?--([A-Za-z0-9][A-Za-z0-9-]*)(?:[ =]\S+)?\s{2,}([a-z0-9-]+):\s", line)
        if m and m.group(2) in commands:
            scoped[m.group(1)] = m.group(2)
    return scoped


def help_choices(path, option):
    """The values the tool accepts for --option, from its usage error on a bad one."""
    p = run([path, "--%s=not-a-choice" % option])
    assert p.returncode == 2, p.stderr
    m = re.search(r"is not one of (.+)", p.stderr)
    assert m, "no list of choices in: %r" % p.stderr
    return set(re.split(r",\s*|\s+or\s+", m.group(1).strip()))


# --------------------------------------------------------------------------------------
# what the man pages say
# --------------------------------------------------------------------------------------

def man_source(name):
    return (MAN / name).read_text(encoding="utf-8")


def man_section(text, title):
    m = re.search(r"(?ms)^\.Sh %s\n(.*?)(?=^\.Sh |\Z)" % re.escape(title), text)
    assert m, "no .Sh %s" % title
    return m.group(1)


def man_options(name):
    """Options that head an .It entry of the OPTIONS section (`.It Fl j Ar n , Fl -parallel Ar n`)."""
    words = []
    for line in man_section(man_source(name), "OPTIONS").splitlines():
        if line.startswith(".It ") and re.search(r"\bFl\b", line):
            for token in re.findall(r"\bFl\s+(-?[A-Za-z0-9][A-Za-z0-9-]*)", line):
                words.append("-" + token)
    return option_names(words)


def man_choices(name, option):
    """The Cm values in the description of `.It Fl -option` of the OPTIONS
    section; an option of one command names it first (`.Cm pin :`), and that
    is no choice."""
    section = man_section(man_source(name), "OPTIONS")
    m = re.search(r"(?ms)^\.It Fl -%s\b[^\n]*\n(.*?)(?=^\.It Fl |\Z)" % re.escape(option), section)
    assert m, "%s: no .It Fl -%s in OPTIONS" % (name, option)
    text = re.sub(r"\A\.Cm [a-z0-9-]+ :\n", "", m.group(1))
    return set(re.findall(r"\bCm\s+([^\s,;.()]+(?:\.[0-9]+)?)", text))


def man_commands(name):
    """The commands the COMMANDS section describes: `.It Cm pin`."""
    return set(re.findall(r"(?m)^\.It Cm (\S+)\s*$", man_section(man_source(name), "COMMANDS")))


# --------------------------------------------------------------------------------------
# what the completions offer
# --------------------------------------------------------------------------------------

def need(program):
    if shutil.which(program) is None:
        pytest.skip("%s is not installed (make deps installs it)" % program)


def shell_env(changes=(), bindir=None):
    """os.environ with `changes`, (name, value) pairs (value None: unset), and
    bindir first on PATH. Pairs, not a dict, so the drivers can cache on them."""
    env = dict(os.environ)
    for key, value in changes:
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    if bindir:
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    return env


BASH_DRIVER = r'''
source /usr/share/bash-completion/bash_completion || exit 3
source "$1" || exit 3
spec=$(complete -p "$2") || exit 4
func=$(sed -n 's/.* -F \([^ ]*\) .*/\1/p' <<<"$spec")
[[ -n $func ]] || exit 5
shift 2
COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
"$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
'''

# Types a command line into an interactive zsh in a pseudo-terminal, presses
# Tab, and prints every match the completion system adds (after the technique
# of zsh-capture-completion).
ZSH_DRIVER = r'''
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
local line
zpty -w z "source ${(q)1}"
repeat 8; do
  zpty -r z line
  [[ $line == ok* ]] && break
done
[[ $line == ok* ]] || { print -u2 'zsh did not start'; exit 2 }
zpty -w z "$2"$'\t'
integer seen=0
while zpty -r z; do :; done | while IFS= read -r line; do
  if [[ $line == *$'\0\r' ]]; then
    (( seen++ )) && exit 0 || continue
  fi
  (( seen )) && print -r -- ${line%$'\r'}
done
exit 2
'''

ZSH_SETUP = r'''
PROMPT=
fpath=(%(fpath)s $fpath)
autoload -U compinit
compinit -u -d %(dump)s
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
null-line () { echo -E - $'\0' }
compprefuncs=( null-line )
comppostfuncs=( null-line exit )
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "$@"
    return $?
  fi
  typeset -a __hits
  builtin compadd -A __hits "$@"
  (( $#__hits )) || return
  local hit
  for hit in $__hits; do echo -E - $IPREFIX$hit; done
}
echo ok
'''


@functools.lru_cache(maxsize=None)
def bash_complete(name, *words, env=()):
    need("bash")
    if not BASH_COMPLETION.exists():
        pytest.skip("bash-completion is not installed (make deps installs it)")
    p = run(["bash", "-c", BASH_DRIVER, "bash", str(COMPLETIONS / "bash" / name), name, *words],
            env=shell_env(env))
    assert p.returncode == 0, "bash completion for %s did not load (status %d): %s" % (
        name, p.returncode, p.stderr)
    return tuple(w for w in p.stdout.split("\n") if w)


@functools.lru_cache(maxsize=None)
def zsh_complete(name, line, env=()):
    need("zsh")
    with tempfile.TemporaryDirectory() as tmp:
        setup = pathlib.Path(tmp) / "setup.zsh"
        setup.write_text(ZSH_SETUP % {"fpath": COMPLETIONS / "zsh", "dump": pathlib.Path(tmp) / "zcompdump"})
        p = run(["zsh", "-f", "-c", ZSH_DRIVER, "zsh", str(setup), line], cwd=tmp, env=shell_env(env))
    assert p.returncode == 0, "zsh completion of %r failed (status %d): %s" % (line, p.returncode, p.stderr)
    return tuple(w for w in p.stdout.split("\n") if w)


def fish_complete(name, line, bindir, env=()):
    return tuple(word for word, _ in fish_complete_described(name, line, bindir, env))


@functools.lru_cache(maxsize=None)
def fish_complete_described(name, line, bindir, env=()):
    """(word, description) pairs that fish offers for `line`."""
    need("fish")
    # As installed: the completions found through fish_complete_path and
    # loaded on first use, which fish does only for a command it can find on
    # PATH; the functions they share autoloaded from fish_function_path (as
    # from vendor_functions.d), not sourced.
    script = "set -p fish_function_path %s; set -p fish_complete_path %s; complete -C%s" % (
        _fish_quote(str(FISH_FUNCTIONS)), _fish_quote(str(COMPLETIONS / "fish")), _fish_quote(line))
    p = run(["fish", "--no-config", "-c", script], env=shell_env(env, bindir))
    assert p.returncode == 0, p.stderr
    return tuple(tuple((w + "\t").split("\t")[:2]) for w in p.stdout.split("\n") if w)


def _fish_quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def completion_options(shell, name, bindir):
    if shell == "bash":
        longs, _ = option_names(bash_complete(name, name, "--"))
        _, shorts = option_names(bash_complete(name, name, "-"))
    elif shell == "zsh":
        longs, _ = option_names(zsh_complete(name, name + " --"))
        _, shorts = option_names(zsh_complete(name, name + " -"))
    else:
        longs, _ = option_names(fish_complete(name, name + " --", bindir))
        _, shorts = option_names(fish_complete(name, name + " -", bindir))
    return longs, shorts


def completion_arguments(shell, name, bindir, before=()):
    """The words a completion offers for the argument after the words
    `before` (the first argument when none), options left out. The tools
    are on PATH, as installed: a completion may ask its tool."""
    on_path = (("PATH", bindir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin")),)
    if shell == "bash":
        words = bash_complete(name, name, *before, "", env=on_path)
    elif shell == "zsh":
        words = zsh_complete(name, " ".join((name, *before, "")), env=on_path)
    else:
        words = fish_complete(name, " ".join((name, *before, "")), bindir)
    return {w for w in words if not w.startswith("-")}


def completion_options_after(shell, name, bindir, before):
    """The long options a completion offers after the words `before`."""
    if shell == "bash":
        words = bash_complete(name, name, *before, "--")
    elif shell == "zsh":
        words = zsh_complete(name, " ".join((name, *before, "--")))
    else:
        words = fish_complete(name, " ".join((name, *before, "--")), bindir)
    return option_names(words)[0]


def completion_choices(shell, name, option, bindir, before=(), env=()):
    """The words a completion offers for the value of --option, typed after the words `before`."""
    if shell == "bash":
        words = bash_complete(name, name, *before, "--" + option, "", env=env)
    elif shell == "zsh":
        words = zsh_complete(name, " ".join((name, *before, "--%s " % option)), env)
    else:
        words = fish_complete(name, " ".join((name, *before, "--%s " % option)), bindir, env)
    return set(words)


# --------------------------------------------------------------------------------------
# the tests
# --------------------------------------------------------------------------------------

def test_there_are_man_pages_for_tools():
    assert "oauth-sign" in TOOLS
    assert (MAN / "socialpipe.7").exists()


@pytest.mark.parametrize("name", TOOLS)
def test_man_page_options_are_the_help_options(tool, name):
    expected = help_options(built(tool, name))
    longs, shorts = man_options(name + ".1")
    assert longs == expected[0], "long options: man page vs --help"
    assert shorts == expected[1], "short options: man page vs --help"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("name", TOOLS)
def test_completion_offers_the_help_options(tool, name, shell):
    path = built(tool, name)
    expected = help_options(path)
    longs, shorts = completion_options(shell, name, os.path.dirname(path))
    assert longs == expected[0], "long options: %s completion vs --help" % shell
    assert shorts == expected[1], "short options: %s completion vs --help" % shell


@pytest.mark.parametrize("name", TOOLS)
def test_choices_agree_between_help_man_page_and_completions(tool, name):
    path = built(tool, name)
    longs, _ = help_options(path)
    checked = [o for o in CHOICE_OPTIONS if o in longs]
    if not checked:
        pytest.skip("%s has none of --%s" % (name, ", --".join(CHOICE_OPTIONS)))
    for option in checked:
        choices = help_choices(path, option)
        assert man_choices(name + ".1", option) == choices, "--%s: man page vs the tool" % option
        for shell in ("bash", "zsh", "fish"):
            assert completion_choices(shell, name, option, os.path.dirname(path)) == choices, \
                "--%s: %s completion vs the tool" % (option, shell)


@pytest.mark.parametrize("name", TOOLS)
def test_graph_versions_agree_between_help_man_page_completions_and_the_tool(tool, name, tmp_path):
    path = built(tool, name)
    longs, _ = help_options(path)
    if GRAPH_VERSION_OPTION not in longs:
        pytest.skip("%s has no --%s" % (name, GRAPH_VERSION_OPTION))
    m = re.search(r"(?m)^\s+--%s\b.*\belse (v[0-9]+\.0)\)\s*$" % GRAPH_VERSION_OPTION, help_text(path))
    assert m, "--help names no default Graph API version"
    default = m.group(1)
    assert default in man_choices(name + ".1", GRAPH_VERSION_OPTION), "man page does not name the default version"
    bindir = os.path.dirname(path)
    offered = {shell: completion_choices(shell, name, GRAPH_VERSION_OPTION, bindir) for shell in ("bash", "zsh", "fish")}
    assert offered["bash"] == offered["zsh"] == offered["fish"], "--%s: completions differ: %r" % (
        GRAPH_VERSION_OPTION, offered)
    assert default in offered["bash"], "the completions do not offer the default version"
    env = dict(os.environ, FB_ACCESS_TOKEN="docs-test-token", XDG_CONFIG_HOME=str(tmp_path))
    for key in ("FB_APP_SECRET", "FB_GRAPH_VERSION", "FB_API_BASE", "SOCIALPIPE_CREDENTIALS", "SOCIALPIPE_PROFILE"):
        env.pop(key, None)
    # A filter sends nothing with --dry-run; an interactive tool checking a
    # profile that does not exist stops at exit 3, after the options.
    rest = ("--dry-run", "x") if tool_commands(path) is None else CHECK_COMMAND
    for version in sorted(offered["bash"]):
        assert re.fullmatch(r"v[0-9]+\.0", version), "a completion offers %r" % version
        p = run([path, "--%s=%s" % (GRAPH_VERSION_OPTION, version), *rest], env=env)
        assert p.returncode != 2, "the tool refuses the offered version %s: %s" % (version, p.stderr)
        if rest == CHECK_COMMAND:
            assert p.returncode == 3 and NO_SUCH_PROFILE in p.stderr, (version, p.returncode, p.stderr)
    p = run([path, "--%s=v27" % GRAPH_VERSION_OPTION, *rest], env=env)
    assert p.returncode == 2, "the man page's vNN.0 form is not what the tool checks: v27 passed"


def offline_env(tmp_path):
    """Made-up credentials of every service, no credentials file, the default APIs:
    enough for --dry-run, which sends nothing."""
    env = dict(os.environ, FB_ACCESS_TOKEN="docs-test-token", TW_BEARER_TOKEN="docs-test-token",
               XDG_CONFIG_HOME=str(tmp_path))
    for key in ("FB_APP_ID", "FB_APP_SECRET", "FB_GRAPH_VERSION", "FB_API_BASE", "TW_API_BASE",
                "TW_CONSUMER_KEY", "TW_CONSUMER_SECRET", "TW_ACCESS_TOKEN", "TW_ACCESS_TOKEN_SECRET",
                "SOCIALPIPE_CREDENTIALS", "SOCIALPIPE_PROFILE"):
        env.pop(key, None)
    return env


@pytest.mark.parametrize("name", TOOLS)
def test_argument_names_agree_between_completions_and_the_tool(tool, name, tmp_path):
    path = built(tool, name)
    if tool_commands(path) is not None:
        pytest.skip("%s takes a command, not records: test_commands_agree_* checks its arguments" % name)
    bindir = os.path.dirname(path)
    offered = {shell: completion_arguments(shell, name, bindir) for shell in ("bash", "zsh", "fish")}
    assert offered["bash"] == offered["zsh"] == offered["fish"], "arguments: completions differ: %r" % offered
    if name not in ARGUMENT_VOCABULARY:
        assert not offered["bash"], "%s: completions offer arguments %r; say what they are in ARGUMENT_VOCABULARY" % (
            name, sorted(offered["bash"]))
        return
    words = sorted(offered["bash"])
    assert words, "%s: the completions offer no %s names" % (name, ARGUMENT_VOCABULARY[name])
    listed = run([path, VOCABULARY_OPTION[name]], env=offline_env(tmp_path)).stdout.split()
    assert words == sorted(listed), "the completions offer the tool's own list (%s)" % VOCABULARY_OPTION[name]
    for shell in ("bash", "zsh", "fish"):
        completion = (COMPLETIONS / shell / {"bash": name, "zsh": "_" + name, "fish": name + ".fish"}[shell]).read_text()
        copied = [w for w in words if re.search(r"\b%s\b" % w, completion)]
        assert not copied, "%s completion of %s keeps a copy of the names: %r" % (shell, name, copied)
    p = run([path, "--dry-run", *words], env=offline_env(tmp_path))
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    assert [e["input"] for e in lines] == [{ARGUMENT_VOCABULARY[name]: w} for w in words], p.stdout
    for word, envelope in zip(words, lines):
        assert envelope["ok"] and "request" in envelope["result"], \
            "the tool does not ask about the offered %s %r: %s" % (ARGUMENT_VOCABULARY[name], word, envelope)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("name", TOOLS)
def test_commands_agree_between_help_man_page_completions_and_the_tool(tool, name):
    path = built(tool, name)
    commands = tool_commands(path)
    if commands is None:
        pytest.skip("%s is a filter: it takes records, not a command" % name)
    expected = set(commands)
    assert len(commands) == len(expected), "the usage error names a command twice: %r" % (commands,)
    assert help_listed_commands(path) == expected, "commands: --help vs the tool's usage error"
    assert man_commands(name + ".1") == expected, "commands: man page COMMANDS vs the tool"
    bindir = os.path.dirname(path)
    for shell in ("bash", "zsh", "fish"):
        assert completion_arguments(shell, name, bindir) == expected, "commands: %s completion vs the tool" % shell
    # The tool knows each one (it objects to what follows it, not to it), and
    # takes nothing after it, so no completion offers anything there.
    for command in commands:
        p = run([path, command, "docs-test-extra-argument"])
        assert p.returncode == 2 and "unknown command" not in p.stderr and "docs-test-extra-argument" in p.stderr, (
            command, p.returncode, p.stderr)
        for shell in ("bash", "zsh", "fish"):
            offered = completion_arguments(shell, name, bindir, (command,))
            assert not offered, "%s %s: the %s completion offers arguments %r" % (name, command, shell, sorted(offered))
    p = run([path, "docs-test-no-such-command"])
    assert p.returncode == 2 and "unknown command" in p.stderr, (p.returncode, p.stderr)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("name", TOOLS)
def test_completion_offers_a_commands_options_after_it(tool, name, shell):
    """After `tw-auth pin`, the options of every command and pin's own, not
    oauth2's; before a command, all of them (test_completion_offers_the_help_options)."""
    path = built(tool, name)
    commands = tool_commands(path)
    if commands is None:
        pytest.skip("%s is a filter: it takes records, not a command" % name)
    longs, _ = help_options(path)
    scoped = help_command_options(path, commands)
    bindir = os.path.dirname(path)
    for command in commands:
        expected = {o for o in longs if scoped.get(o, command) == command}
        offered = completion_options_after(shell, name, bindir, (command,))
        assert offered == expected, "%s %s: %s completion offers %r, --help gives %r" % (
            name, command, shell, sorted(offered), sorted(expected))


@pytest.mark.parametrize("name", TOOLS)
def test_man_page_says_which_command_an_option_belongs_to(tool, name):
    path = built(tool, name)
    commands = tool_commands(path)
    if commands is None:
        pytest.skip("%s is a filter: it takes records, not a command" % name)
    for option, command in sorted(help_command_options(path, commands).items()):
        text = man_option_text(name + ".1", option)
        assert re.match(r"\s*%s\s*:" % re.escape(command), text), (
            "--help gives --%s to %s; the man page's entry does not start with '%s:': %r" % (option, command, command, text))


def write_credentials(path, profiles):
    """A credentials file with these (made-up) profiles, private as the tools want it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"default": profiles[0], "profiles": {
        p: {"twitter": {"consumer_key": "k", "consumer_secret": "s",
                        "access_token": "t", "access_token_secret": "ts"},
            "facebook": {"access_token": "docs-test-token"}} for p in profiles}}), encoding="utf-8")
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("name", TOOLS)
def test_profile_completion_offers_the_profiles_of_the_credentials_file(tool, name, shell, tmp_path):
    path = built(tool, name)
    if PROFILE_OPTION not in help_options(path)[0]:
        pytest.skip("%s has no --%s" % (name, PROFILE_OPTION))
    need("jq")
    bindir = os.path.dirname(path)
    # The default file, $XDG_CONFIG_HOME/socialpipe/credentials.json ...
    config = tmp_path / "config"
    write_credentials(config / "socialpipe" / "credentials.json", ["work", "docs-test", "page"])
    env = (("XDG_CONFIG_HOME", str(config)), ("HOME", str(tmp_path)),
           ("SOCIALPIPE_CREDENTIALS", None), ("SOCIALPIPE_PROFILE", None))
    offered = completion_choices(shell, name, PROFILE_OPTION, bindir, env=env)
    assert offered == {"work", "docs-test", "page"}, (
        "--%s: the %s completion offers %r, not the profiles of the credentials file"
        % (PROFILE_OPTION, shell, sorted(offered)))
    # ... and the one --credentials names, when the command line names one.
    other = write_credentials(tmp_path / "other.json", ["elsewhere"])
    offered = completion_choices(shell, name, PROFILE_OPTION, bindir, ("--credentials", str(other)), env)
    assert offered == {"elsewhere"}, (
        "--%s after --credentials: the %s completion offers %r" % (PROFILE_OPTION, shell, sorted(offered)))
    # An interactive tool's --profile comes after its command as often as
    # before it, and --credentials may stand on either side of the command.
    for command in tool_commands(path) or ():
        offered = completion_choices(shell, name, PROFILE_OPTION, bindir, (command,), env)
        assert offered == {"work", "docs-test", "page"}, (
            "%s --%s: the %s completion offers %r" % (command, PROFILE_OPTION, shell, sorted(offered)))
        offered = completion_choices(shell, name, PROFILE_OPTION, bindir, ("--credentials", str(other), command), env)
        assert offered == {"elsewhere"}, (
            "--credentials FILE %s --%s: the %s completion offers %r" % (command, PROFILE_OPTION, shell, sorted(offered)))


def man_option_text(page, long):
    """The description of the OPTIONS entry whose .It names --long, joined into one line."""
    section = man_section(man_source(page), "OPTIONS")
    m = re.search(r"(?ms)^\.It [^\n]*\bFl -%s\b[^\n]*\n(.*?)(?=^\.It |^\.El|\Z)" % re.escape(long), section)
    assert m, "%s: no .It for --%s in OPTIONS" % (page, long)
    return " ".join(re.sub(r"^\.[A-Z][a-z]\s*", "", line) for line in m.group(1).splitlines())


@pytest.mark.parametrize("name", TOOLS)
def test_quiet_means_the_same_in_help_man_page_completions_and_the_tool(tool, name, tmp_path):
    path = built(tool, name)
    if QUIET_OPTION not in help_options(path)[0]:
        pytest.skip("%s has no --%s" % (name, QUIET_OPTION))
    m = re.search(r"(?m)^\s+-q, --quiet\s+(.*)$", help_text(path))
    assert m, "--help has no '-q, --quiet' line"
    silent = "nothing on stdout" in m.group(1)
    in_page = man_option_text(name + ".1", QUIET_OPTION)
    assert ("nothing on standard output" in in_page) == silent, (
        "--help says %r; the man page says %r" % (m.group(1), in_page))
    # Quiet everywhere: each says all it silences, and that stderr still speaks.
    for says, text in (("--help", m.group(1)), ("the man page", in_page)):
        assert text.lower().startswith("quiet:"), "%s does not say -q is quiet: %r" % (says, text)
        for silenced in ("progress line", "input reminder", "still appear"):
            assert silenced in text, "%s says %r, without %r" % (says, text, silenced)
    described = dict(fish_complete_described(name, name + " -", os.path.dirname(path)))
    assert ("stdout" in described.get("--quiet", "")) == silent, (
        "--help says %r; fish describes --quiet as %r" % (m.group(1), described.get("--quiet")))
    if silent:
        p = run([path, "-q", "--dry-run", "x"], env=offline_env(tmp_path))
        assert p.returncode == 0 and p.stdout == "", ("-q wrote on stdout", p.returncode, p.stdout)


@pytest.mark.parametrize("name", TOOLS)
def test_man_page_lists_the_exit_statuses_of_help(tool, name):
    text = help_text(built(tool, name))
    m = re.search(r"(?s)Exit status:(.*?)(?:\n\n|\Z)", text)
    if not m:
        pytest.skip("%s --help names no exit statuses" % name)
    in_help = {int(n) for n in re.findall(r"\b\d+\b", re.sub(r"\(\d\)", "", m.group(1)))}
    in_page = man_exit_statuses(name + ".1")
    assert in_help <= in_page


def man_exit_statuses(page):
    section = man_section(man_source(page), "EXIT STATUS")
    return {int(n) for n in re.findall(r"(?m)^\.It (?:Sy )?(\d+)\s*$", section)}


def man_prices():
    """{key: built-in price} as the prices page's KEYS section gives them."""
    section = man_section(man_source(PRICES_PAGE), "KEYS")
    return {key: float(price) for key, price in re.findall(r"(?m)^\.It Cm ([a-z_]+)\n([0-9]+\.[0-9]+):", section)}


def dry_run_cost(argv, env, stdin=None):
    """The `cost` of the one envelope of a dry run with --cost."""
    p = subprocess.run(argv, input=stdin or "", capture_output=True, text=True, timeout=TIMEOUT,
                       env=dict(env, LC_ALL="C.UTF-8", LANG="C.UTF-8"))
    assert p.returncode == 0, (argv, p.returncode, p.stderr)
    envelopes = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(envelopes) == 1, p.stdout
    return envelopes[0]["cost"]


def test_prices_page_gives_the_keys_and_prices_the_tools_charge(tool, tmp_path):
    post, friends = built(tool, "tw-post"), built(tool, "tw-friends")
    env = offline_env(tmp_path)
    # The keys: a prices file with an unknown one makes the tools name them all.
    unknown = tmp_path / "unknown.json"
    unknown.write_text('{"x": {"docs_test_no_such_key": 1}}', encoding="utf-8")
    p = run([post, "--prices", str(unknown), "--dry-run", "x"], env=env)
    m = re.search(r"the keys: ([a-z_, ]+)\)", p.stderr)
    assert p.returncode == 3 and m, (p.returncode, p.stderr)
    keys = m.group(1).split(", ")
    page = man_prices()
    assert sorted(page) == sorted(keys), "%s: KEYS vs the keys the tools know" % PRICES_PAGE
    # Each built-in price: what a dry run shows for a record that needs it,
    # every other key priced 0 by a prices file.
    png = tmp_path / "shot.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(56))
    needs = {
        "post_create": ([post, "a post"], None),
        "post_create_url": ([post, "a post with a link: example.com"], None),
        "media_metadata": ([post, "--media-dir", str(tmp_path)],
                           '{"text": "", "media": [{"path": "shot.png", "alt": "a shot"}]}'),
        "user_read": ([friends, "--page-size", "1", "jack"], None),
        "following_read": ([friends, "--page-size", "1", "jack"], None),
        "owned_read": ([friends, "--page-size", "1", "--me"], None),
    }
    assert sorted(needs) == sorted(keys), "keys this test cannot price: %r" % sorted(set(keys) - set(needs))
    for key in keys:
        others = tmp_path / ("all-but-%s.json" % key)
        others.write_text(json.dumps({"x": {other: 0 for other in keys if other != key}}), encoding="utf-8")
        argv, stdin = needs[key]
        cost = dry_run_cost([argv[0], "--dry-run", "--cost", "--prices", str(others), *argv[1:]], env, stdin)
        assert cost == page[key], "%s: %s is %s in %s; the tools charge %s" % (key, key, page[key], PRICES_PAGE, cost)


@pytest.mark.parametrize("page", PAGES)
def test_man_page_is_lint_clean(page):
    need("mandoc")
    p = run(["mandoc", "-Tlint", "-W", "style", str(MAN / page)])
    problems = []
    for line in (p.stdout + p.stderr).splitlines():
        # Which pages are installed is the machine's business, not the page's:
        # a page of the suite is found once installed, so it need only be in man/.
        m = re.search(r"referenced manual not found: Xr (\S+) (\w+)", line)
        if m and "%s.%s" % m.groups() in PAGES or "outdated mandoc.db" in line:
            continue
        problems.append(line)
    assert problems == [], "\n".join(problems)


def test_readme_says_how_bash_finds_completions_under_another_prefix(tmp_path):
    need("bash")
    if not BASH_COMPLETION.exists():
        pytest.skip("bash-completion is not installed (make deps installs it)")
    m = re.search(r"(?m)^export XDG_DATA_DIRS=.*$", README.read_text(encoding="utf-8"))
    assert m, "README's Install does not say how bash finds completions under another PREFIX"
    setup = m.group(0)

    def finds(prefix, home, setup=":"):
        """Whether bash, given `setup`, loads tw-post's completion installed under `prefix`."""
        target = prefix / "share" / "bash-completion" / "completions"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(COMPLETIONS / "bash" / "tw-post", target / "tw-post")
        home.mkdir(exist_ok=True)
        script = "source %s; %s; __load_completion tw-post && complete -p tw-post" % (BASH_COMPLETION, setup)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "PREFIX": str(prefix)}
        return run(["bash", "-c", script], env=env).returncode == 0

    # The prefix the README recommends needs nothing; another needs the README's line.
    assert finds(tmp_path / "a" / ".local", tmp_path / "a")
    assert not finds(tmp_path / "opt", tmp_path / "b")
    assert finds(tmp_path / "opt", tmp_path / "b", setup)


def test_demo_writes_no_terminal_escapes_when_stdout_is_not_a_terminal(tool):
    """`make demo > file` (the demo script it runs, with the tools under test)."""
    bindir = os.path.dirname(built(tool, "tw-post"))
    missing = [t for t in makefile_list("TOOLS") if not os.access(os.path.join(bindir, t), os.X_OK)]
    if missing:
        pytest.skip("not built in %s: %s" % (bindir, ", ".join(missing)))
    env = dict(os.environ, SOCIALPIPE_BIN=bindir, PYTHON=sys.executable)
    p = run(["sh", str(ROOT / "sandbox" / "demo.sh")], env=env)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert "== oauth-sign signs a request offline" in p.stdout, p.stdout[:2000]
    assert "\x1b" not in p.stdout + p.stderr, [line for line in p.stdout.splitlines() if "\x1b" in line][:3]


def test_readme_many_processes_recipe_gives_the_output_of_one_process(tool, tmp_path):
    """README "Many processes, many machines" (issue 21): its block, run as
    written with the tools under test, prints what its last comment says: GNU
    parallel's chunks, each told its --first-line, write exactly what one
    process writes (the records fix nonce and timestamp, so the bytes compare)."""
    text = README.read_text(encoding="utf-8")
    m = re.search(r"(?s)<!-- many-processes recipe[^>]*-->\n```sh\n(.*?)```", text)
    assert m, "README's Many processes section has no recipe block under its marker"
    block = m.group(1)
    assert shutil.which("parallel"), "GNU parallel is missing: make test-deps installs it (TEST_DEBS)"
    bindir = os.path.dirname(built(tool, "oauth-sign"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""), HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "config"), TW_CONSUMER_KEY="ck", TW_CONSUMER_SECRET="cs",
               TW_ACCESS_TOKEN="1-at", TW_ACCESS_TOKEN_SECRET="ats")
    p = run(["bash", "-e", "-o", "pipefail", "-c", block], env=env, cwd=tmp_path)
    promised = [line[2:] for line in block.splitlines() if line.startswith("# ")][-1]
    assert (p.returncode, p.stdout.strip()) == (0, promised), p.stdout[-2000:] + p.stderr[-2000:]
    assert sum(1 for _ in open(tmp_path / "parallel.jsonl", encoding="utf-8")) == 25000


def test_sandbox_credentials_file_of_the_readme_is_ignored_by_git():
    need("git")
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for name in ("sandbox-credentials.json", "sandbox-credentials.json.lock"):
        p = run(["git", "-C", str(ROOT), "check-ignore", "-q", name])
        assert p.returncode == 0, "%s, which the README's first run creates, is not in .gitignore" % name


def test_sandbox_without_the_venv_packages_says_to_use_the_venv():
    # -S: no site-packages, as a python3 without the venv's packages.
    p = run([sys.executable, "-S", str(ROOT / "sandbox" / "sandbox.py"), "--port", "0"])
    assert p.returncode == 1 and p.stdout == "", p
    assert "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith("sandbox: ") and ".venv/bin/python sandbox/sandbox.py" in p.stderr, p.stderr


def test_readme_says_what_to_do_when_the_redirect_is_null():
    import sandbox_x_auth
    text = README.read_text(encoding="utf-8")
    step = text[text.index("jq -r .redirect"):]
    step = step[:step.index("4. **Check it**")]
    assert "prints `null`" in step, "the README's be-the-browser step does not say what a null redirect means"
    # The refusals it quotes are the sandbox's own words.
    for pending in ([], ["one", "two"]):
        with pytest.raises(ValueError) as refused:
            sandbox_x_auth.only_one(pending, "authorize_oauth2", "state")
        quoted = str(refused.value).split(": ", 1)[1]
        assert "`%s`" % quoted in " ".join(step.split()), (quoted, step)


def test_readme_names_the_first_run_commands():
    text = README.read_text(encoding="utf-8")
    assert "make demo" in text
    assert "make test" in text


def test_overview_page_lists_every_contract_exit_status():
    assert man_exit_statuses("socialpipe.7") == CONTRACT_EXIT_STATUSES | PROPOSED_EXIT_STATUSES


def test_contract_exit_statuses_are_still_these():
    candidates = [os.environ.get("SOCIALPIPE_CONTRACT"), ROOT / "docs" / "contract.md",
                  ROOT.parent / "shared" / "docs" / "contract.md"]
    contract = next((pathlib.Path(c) for c in candidates if c and pathlib.Path(c).is_file()), None)
    if contract is None:
        pytest.skip("docs/contract.md not found (set SOCIALPIPE_CONTRACT to check against it)")
    text = contract.read_text(encoding="utf-8")
    section = re.search(r"(?ms)^## 3\. Exit status\n(.*?)(?=^## )", text).group(1)
    statuses = set()
    for cell in re.findall(r"(?m)^\|\s*([0-9][0-9 /]*)\|", section):
        statuses |= {int(n) for n in cell.split("/")}
    statuses |= {int(n) for n in re.findall(r"exit status (\d+)", section)}
    assert statuses - PROPOSED_EXIT_STATUSES == CONTRACT_EXIT_STATUSES


def test_every_installed_tool_has_its_docs():
    m = re.search(r"(?m)^TOOLS\s*=\s*(.*)$", MAKEFILE.read_text(encoding="utf-8"))
    assert m, "no TOOLS = line in the Makefile"
    for name in m.group(1).split():
        assert (MAN / (name + ".1")).is_file(), name
        assert (COMPLETIONS / "bash" / name).is_file(), name
        assert (COMPLETIONS / "zsh" / ("_" + name)).is_file(), name
        assert (COMPLETIONS / "fish" / (name + ".fish")).is_file(), name


def makefile_list(variable):
    m = re.search(r"(?m)^%s\s*=\s*(.*)$" % re.escape(variable), MAKEFILE.read_text(encoding="utf-8"))
    assert m, "no %s = line in the Makefile" % variable
    return set(m.group(1).split())


def test_every_shared_completion_function_is_installed():
    tools = makefile_list("TOOLS")
    zsh_helpers = {p.name for p in (COMPLETIONS / "zsh").glob("_*")} - {"_" + t for t in tools}
    assert makefile_list("ZSH_HELPERS") == zsh_helpers, "zsh helpers vs ZSH_HELPERS in the Makefile"
    assert makefile_list("FISH_FUNCTIONS") == {p.stem for p in FISH_FUNCTIONS.glob("*.fish")}, \
        "completions/fish/functions vs FISH_FUNCTIONS in the Makefile"
    for helper in zsh_helpers:
        first = (COMPLETIONS / "zsh" / helper).read_text(encoding="utf-8").split("\n", 1)[0]
        assert first == "#autoload", "%s: compinit autoloads it only with a first line #autoload" % helper


def test_make_install_puts_every_page_and_completion_in_place(tool, tmp_path):
    """`make install` (to a DESTDIR, from the binaries under test) installs
    every man page in its section's directory, every tool's completions and
    the functions they share; `make uninstall` removes every file again."""
    need("make")
    bindir = os.path.dirname(tool("oauth-sign"))
    tools = sorted(makefile_list("TOOLS"))
    missing = [t for t in tools if not os.access(os.path.join(bindir, t), os.X_OK)]
    if missing:
        pytest.skip("not built in %s: %s" % (bindir, ", ".join(missing)))
    dest, prefix = tmp_path / "dest", "/usr/local"
    make = ["make", "-s", "-C", str(ROOT), "DESTDIR=" + str(dest), "PREFIX=" + prefix, "RELEASE=" + bindir]
    p = run(make + ["install"])
    assert p.returncode == 0, p.stdout + p.stderr
    share = dest / prefix.lstrip("/") / "share"
    installed = {str(f.relative_to(dest)) for f in dest.rglob("*") if f.is_file()}
    expected = {"usr/local/bin/" + t for t in tools}
    expected |= {"usr/local/share/man/man%s/%s" % (page.rsplit(".", 1)[1], page) for page in PAGES}
    for t in tools:
        expected |= {"usr/local/share/bash-completion/completions/" + t, "usr/local/share/zsh/site-functions/_" + t,
                     "usr/local/share/fish/vendor_completions.d/%s.fish" % t}
    expected |= {"usr/local/share/zsh/site-functions/" + h for h in makefile_list("ZSH_HELPERS")}
    expected |= {"usr/local/share/fish/vendor_functions.d/%s.fish" % f for f in makefile_list("FISH_FUNCTIONS")}
    assert installed == expected, "installed but not expected: %r; expected but not installed: %r" % (
        sorted(installed - expected), sorted(expected - installed))
    assert (share / "man" / "man5" / "socialpipe-credentials.5").is_file()
    p = run(make + ["uninstall"])
    assert p.returncode == 0, p.stdout + p.stderr
    left = sorted(str(f.relative_to(dest)) for f in dest.rglob("*") if f.is_file())
    assert not left, "make uninstall left %r" % left
