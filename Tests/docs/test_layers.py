"""The core is built in floors, and it names no service.

The core, Sources/Socialpipe, is in folders, and FLOORS lists them from the
bottom up. A floor uses only the floors below it:

- Support: bytes, JSON (one scanner; reading, checking, writing),
  percent-encoding, UTF-8, spelling, the clock, system calls (EINTR retried
  in one place), files (the credentials file, a CA bundle).
- Process: what every command has: options and `ToolMain`, messages on
  stderr, start-up errors, exit statuses, the standard streams, the writer of
  stdout.
- Records: lines and records, record errors, redaction, the ordered output.
- OAuth: a record's credentials (profiles, the environment), the API base,
  crypto, OAuth 1.0a signing.
- Engine: a record's job and its requests, their transport and retries.
- Loop: the one loop every tool runs, signals, the progress line.

A declaration at the top level of a core file (a type, a function, a global
constant) that a file in another folder names makes an edge from that
folder to the declaration's; so does a member of an extension (of a type
from elsewhere) named after a `.`. Every edge must point down FLOORS, so
there is no cycle either. Names are looked for in the code without its
comments and string literals (the code of an interpolation counts).

The core's files, comments and strings included, name neither X nor the
Graph API (SERVICE_WORDS): what a service must tell the core comes from the
service's module through the core's protocols (SocialpipeGraph's service
has Redaction hide `appsecret_proof`). The commands' own names (tw-post,
fb-feed) may be cited as examples; they are the suite's, not a service's.

Run as a script, this prints the folder graph with the count of each edge
(the pairs of a using file and a name it uses from the other floor).
"""
import collections
import pathlib
import re
import sys

FLOORS = ["Support", "Process", "Records", "OAuth", "Engine", "Loop"]

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORE = ROOT / "Sources" / "Socialpipe"

# (pattern, flags): a service's name, host, header or parameter. `X` counts
# as a word of its own, not quoted as a placeholder (`'X'`) nor part of a
# name (`X-Request-Id`).
SERVICE_WORDS = [
    (r"twitter", re.I),
    (r"tweet", re.I),
    (r"facebook", re.I),
    (r"instagram", re.I),
    (r"\bfb\.(com|me)\b", re.I),
    (r"\bx\.com\b", re.I),
    (r"x-rate-limit", re.I),
    (r"x-(app|page|ad-account)-usage", re.I),
    (r"x-business-use-case", re.I),
    (r"fbtrace", re.I),
    (r"appsecret", re.I),
    (r"\bGraph\b", 0),
    (r"\bMeta\b", 0),
    (r"(?<![\w'\"`-])X(?:'s)?(?![\w'\"`-])", 0),
]

MODIFIERS = (r"(?:(?:public|internal|private|fileprivate|open|final|static|class|indirect|mutating|nonmutating|"
             r"override|convenience|required|lazy|nonisolated(?:\(unsafe\))?|(?:public|internal)\s*\(set\)|"
             r"private\s*\(set\)|fileprivate\s*\(set\)|@[\w.]+(?:\([^)]*\))?)\s+)*")
TOP_DECLARATION = re.compile(r"^(" + MODIFIERS + r")(?:class|struct|enum|protocol|typealias|actor|func|let|var)\s+"
                             r"([A-Za-z_]\w*)", re.M)
EXTENSION = re.compile(r"^(" + MODIFIERS + r")extension\s+([A-Za-z_][\w.]*)", re.M)
MEMBER = re.compile(r"^\s*(" + MODIFIERS + r")(?:func|var|let|subscript)\s+([A-Za-z_]\w*)", re.M)
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def code_of(text):
    """`text` without comments and without the text of string literals,
    keeping the code of each interpolation `\\(…)` and every line break."""
    out = []
    n = len(text)

    def string(i, delimiter, raw_hashes):
        close = delimiter + "#" * raw_hashes
        opener = "\\" + "#" * raw_hashes
        while i < n:
            if text.startswith(close, i):
                return i + len(close)
            if text.startswith(opener, i):
                after = i + len(opener)
                if after < n and text[after] == "(":
                    i = code(after + 1, inside_parentheses=True)
                    continue
                i = after + 1
                continue
            if text[i] == "\n":
                out.append("\n")
            i += 1
        return i

    def code(i, inside_parentheses=False):
        depth = 0
        while i < n:
            if text.startswith("//", i):
                end = text.find("\n", i)
                i = n if end < 0 else end
                continue
            if text.startswith("/*", i):
                nesting = 0
                while i < n:
                    if text.startswith("/*", i):
                        nesting, i = nesting + 1, i + 2
                    elif text.startswith("*/", i):
                        nesting, i = nesting - 1, i + 2
                        if nesting == 0:
                            break
                    else:
                        if text[i] == "\n":
                            out.append("\n")
                        i += 1
                continue
            literal = re.match(r'(#*)("""|")', text[i:i + 8])
            if literal and (literal.group(1) == "" or text[i] == "#"):
                hashes = len(literal.group(1))
                out.append(' "" ')
                i = string(i + literal.end(), literal.group(2), hashes)
                continue
            character = text[i]
            if inside_parentheses and character == "(":
                depth += 1
            elif inside_parentheses and character == ")":
                if depth == 0:
                    return i + 1
                depth -= 1
            out.append(character)
            i += 1
        return i

    code(0)
    return "".join(out)


def is_file_private(modifiers):
    return re.search(r"\b(private|fileprivate)\b(?!\s*\(set\))", modifiers) is not None


def block_after(code, start):
    """The text inside the braces that open after `start`."""
    opening = code.find("{", start)
    if opening < 0:
        return ""
    depth = 0
    for index in range(opening, len(code)):
        if code[index] == "{":
            depth += 1
        elif code[index] == "}":
            depth -= 1
            if depth == 0:
                return code[opening + 1:index]
    return code[opening + 1:]


def top_level_members(body):
    """Declarations at the first level of an extension's body."""
    depth = 0
    lines = []
    for line in body.split("\n"):
        if depth == 0:
            lines.append(line)
        depth += line.count("{") - line.count("}")
    return MEMBER.finditer("\n".join(lines))


def analyse(core):
    """(files: {path: (floor, code)}, declarations: {name: floor},
    members: {name: floor}) of the core at `core`."""
    files = {}
    declarations = {}
    for path in sorted(core.rglob("*.swift")):
        relative = path.relative_to(core)
        floor = relative.parts[0] if len(relative.parts) > 1 else ""
        code = code_of(path.read_text(encoding="utf-8"))
        files[path] = (floor, code)
        for match in TOP_DECLARATION.finditer(code):
            if not is_file_private(match.group(1)):
                declarations[match.group(2)] = floor
    members = {}
    for path, (floor, code) in files.items():
        for match in EXTENSION.finditer(code):
            extended = match.group(2).split(".")[0]
            if declarations.get(extended) == floor or is_file_private(match.group(1)):
                continue
            for member in top_level_members(block_after(code, match.end())):
                if not is_file_private(member.group(1)):
                    members[member.group(2)] = floor
    return files, declarations, members


def edges(core):
    """{(from floor, to floor): {"File.swift: Name", …}} over the core at `core`."""
    files, declarations, members = analyse(core)
    found = collections.defaultdict(set)
    for path, (floor, code) in files.items():
        used = {}
        for match in IDENTIFIER.finditer(code):
            name = match.group(0)
            if name in declarations:
                used[name] = declarations[name]
            elif name in members and code[:match.start()].rstrip().endswith("."):
                used[name] = members[name]
        for name, home in used.items():
            if home != floor:
                found[(floor, home)].add(f"{path.relative_to(core)}: {name}")
    return found


def upward(found):
    """The edges that do not point down FLOORS (or involve a folder not in it)."""
    def rank(floor):
        return FLOORS.index(floor) if floor in FLOORS else None
    return {edge: uses for edge, uses in found.items()
            if rank(edge[0]) is None or rank(edge[1]) is None or rank(edge[0]) <= rank(edge[1])}


def service_words(core):
    """"path:line: text" of each line of the core that names a service."""
    hits = []
    patterns = [re.compile(pattern, flags) for pattern, flags in SERVICE_WORDS]
    for path in sorted(core.rglob("*.swift")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(pattern.search(line) for pattern in patterns):
                hits.append(f"{path.relative_to(core)}:{number}: {line.strip()}")
    return hits


def describe(found):
    return "\n".join(f"{a} -> {b} ({len(uses)}): " + ", ".join(sorted(uses)) for (a, b), uses in sorted(found.items()))


def test_every_folder_of_the_core_is_a_floor():
    folders = {path.relative_to(CORE).parts[0] if len(path.relative_to(CORE).parts) > 1 else "(the core's top)"
               for path in CORE.rglob("*.swift")}
    assert folders == set(FLOORS), f"folders {sorted(folders)}, floors {FLOORS}"


def test_every_reference_between_floors_points_down():
    found = edges(CORE)
    assert found, "no reference between floors found: the scan is broken"
    wrong = upward(found)
    assert not wrong, "references that point up (floors from the bottom: %s):\n%s" % (FLOORS, describe(wrong))


def test_the_core_names_no_service():
    hits = service_words(CORE)
    assert not hits, "the core names a service:\n" + "\n".join(hits)


def test_the_scan_finds_an_upward_reference_and_skips_comments_and_strings(tmp_path):
    (tmp_path / "Support").mkdir()
    (tmp_path / "Loop").mkdir()
    (tmp_path / "Support" / "Low.swift").write_text(
        '/// Uses High only in a comment.\npublic enum Low {\n    static let text = "High, \\"quoted\\""\n'
        '    static let raw = #"High "\\#(Low.self)""#\n    static func said() -> String { "\\(Lifted.name)" }\n}\n'
        "/* High /* nested */ High */\n"
        'private func hidden() -> String { """\n    High\n    """ }\n')
    (tmp_path / "Loop" / "High.swift").write_text(
        "public enum Lifted { public static let name = \"x\" }\n"
        "extension Low {\n    public func shown() -> Int { 1 }\n    private func kept() -> Int { 2 }\n}\n"
        "struct High { let low = Low.self }\n")
    found = edges(tmp_path)
    assert set(found) == {("Support", "Loop"), ("Loop", "Support")}, describe(found)
    assert found[("Support", "Loop")] == {"Support/Low.swift: Lifted"}, describe(found)
    (tmp_path / "Support" / "Later.swift").write_text("func use(_ low: Low) -> Int { low.shown() + low.kept() }\n")
    assert edges(tmp_path)[("Support", "Loop")] == {"Support/Low.swift: Lifted", "Support/Later.swift: shown"}


def test_the_service_words_find_x_and_graph_but_not_placeholders(tmp_path):
    (tmp_path / "Records").mkdir()
    named = ["// X's limits", "// as X and Graph do", "let host = \"https://api.x.com\"", "// a Tweet",
             "// x-rate-limit-reset", "// the appsecret_proof", "// Facebook Login", "// the Graph API"]
    unnamed = ["// `{'access_token':'X'}`", "// X-Request-Id", "// 0xFF", "// a paragraph", "// the graph of folders",
               "// tw-post's media", "// metadata"]
    (tmp_path / "Records" / "Words.swift").write_text("\n".join(named + unnamed) + "\n")
    assert [hit.split(": ", 1)[1] for hit in service_words(tmp_path)] == named


if __name__ == "__main__":
    found = edges(CORE)
    print(describe(found) if "-v" in sys.argv else
          "\n".join(f"{a} -> {b}: {len(uses)}" for (a, b), uses in sorted(found.items())))
    wrong = upward(found)
    print(f"upward: {len(wrong)} of {len(found)} edges; floors from the bottom: {FLOORS}")
