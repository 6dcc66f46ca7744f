//! Every relative link of the documentation resolves: in README.md and docs/**/*.md, each
//! markdown link `[text](target)`, image `![alt](target)` and reference definition
//! `[label]: target` whose target is not a URL (`http:`, `https:`, `mailto:`, any
//! `scheme:`) names a file or folder that exists, relative to the markdown file's folder
//! (or to the repository root when it starts with `/`), and a `#fragment` names a heading
//! of the target markdown file (or of the file itself for a bare `#fragment`) by its
//! GitHub anchor. Links in fenced code blocks and inline code spans are not links.
//! A failure lists every broken link as `file:line: target`. Only std: no dependencies.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// The repository where the test runs (cargo sets `CARGO_MANIFEST_DIR` for each test
/// process), not where the binary was built.
fn root() -> PathBuf {
    PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR: run with cargo"),
    )
}

/// README.md and every `.md` file under docs/, sorted.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut files = vec![root.join("README.md")];
    walk(&root.join("docs"), &mut files);
    files.sort();
    files
}

/// The fence that opens or closes a fenced code block on this line (```` ``` ```` or
/// `~~~`, at most 3 spaces in), with its length.
fn fence(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = rest.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = rest.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

/// The lines outside fenced code blocks, with their 1-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut open: Option<(char, usize)> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match (open, fence(line)) {
            (None, Some(f)) => open = Some(f),
            // A closing fence: the same character, at least as long, nothing after it.
            (Some((c, n)), Some((c2, n2)))
                if c == c2 && n2 >= n && line.trim().chars().all(|x| x == c) =>
            {
                open = None
            }
            (None, None) => out.push((i + 1, line)),
            _ => {}
        }
    }
    out
}

/// `line` with its inline code spans (`` `…` ``, any number of backticks) blanked out.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = chars[i..].iter().take_while(|&&c| c == '`').count();
        // The closing run: exactly n backticks.
        let mut j = i + n;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let m = chars[j..].iter().take_while(|&&c| c == '`').count();
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                out.extend(std::iter::repeat_n(' ', j + n - i));
                i = j + n;
            }
            None => {
                // No closing run: the backticks are literal.
                out.extend(std::iter::repeat_n('`', n));
                i += n;
            }
        }
    }
    out
}

/// The link targets of one prose line: inline links and images `](target)` (the target
/// being the destination before any title) and a reference definition `[label]: target`.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut targets = Vec::new();
    let trimmed = line.trim_start();
    if trimmed.starts_with('[') && !trimmed.starts_with("[^") {
        if let Some(end) = trimmed.find("]:") {
            let dest = trimmed[end + 2..].split_whitespace().next().unwrap_or("");
            if !trimmed[..end].contains('(') && !dest.is_empty() {
                targets.push(
                    dest.trim_start_matches('<')
                        .trim_end_matches('>')
                        .to_string(),
                );
            }
        }
    }
    let mut from = 0;
    while let Some(at) = line[from..].find("](") {
        let start = from + at + 2;
        let rest = &line[start..];
        let dest = if let Some(angled) = rest.strip_prefix('<') {
            angled.split('>').next().unwrap_or("").to_string()
        } else {
            // The destination ends at whitespace or at the `)` that balances the `(`.
            let mut depth = 0usize;
            let mut dest = String::new();
            for c in rest.chars() {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 0 => break,
                    ')' => depth -= 1,
                    c if c.is_whitespace() => break,
                    _ => {}
                }
                dest.push(c);
            }
            dest
        };
        if !dest.is_empty() {
            targets.push(dest);
        }
        from = start;
    }
    targets
}

/// Whether `target` is a URL (`http:`, `https:`, `mailto:` or any other scheme), not a path.
fn is_url(target: &str) -> bool {
    match target.find(':') {
        Some(colon) => {
            let scheme = &target[..colon];
            !scheme.is_empty()
                && scheme
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => target.starts_with("//"),
    }
}

/// `%XX` escapes decoded (`%20` in a file name).
fn percent_decoded(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The GitHub anchor of a heading's text: inline links reduced to their text, lower case,
/// every character but letters, digits, `-`, `_` and spaces dropped, spaces made `-`.
fn slug(heading: &str) -> String {
    // `[text](target)` → `text`, so that the target's characters do not enter the slug.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|c| open + c) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|e| close + e) else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a markdown text: the slug of each ATX heading outside code blocks (a
/// repeated slug gets `-1`, `-2`, … as on GitHub), and the `id`/`name` of HTML anchors.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let t = line.trim_start();
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with([' ', '\t']) {
            let heading = t[hashes..].trim().trim_end_matches('#').trim_end();
            let base = slug(heading);
            let mut anchor = base.clone();
            let mut n = 0;
            while seen.contains(&anchor) {
                n += 1;
                anchor = format!("{base}-{n}");
            }
            seen.insert(anchor);
        }
        for key in ["id=\"", "name=\""] {
            let mut from = 0;
            while let Some(at) = line[from..].find(key) {
                let start = from + at + key.len();
                if let Some(len) = line[start..].find('"') {
                    seen.insert(line[start..start + len].to_string());
                }
                from = start;
            }
        }
    }
    seen
}

/// `path` with `.` and `..` resolved lexically (the files need not exist).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Why the relative link `target` of `file` does not resolve, or `None` when it does.
fn broken(root: &Path, file: &Path, target: &str) -> Option<String> {
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let path = percent_decoded(path.split('?').next().unwrap_or(""));
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else if let Some(from_root) = path.strip_prefix('/') {
        root.join(from_root)
    } else {
        normalized(&file.parent().unwrap_or(root).join(&path))
    };
    if !resolved.exists() {
        return Some("no such file".to_string());
    }
    let fragment = fragment.filter(|f| !f.is_empty())?;
    if resolved.extension().is_none_or(|e| e != "md") {
        return None; // anchors of other files (source lines, …) are not checked
    }
    let text = fs::read_to_string(&resolved).ok()?;
    let wanted = percent_decoded(fragment).to_lowercase();
    (!anchors(&text).contains(&wanted)).then(|| format!("no heading #{wanted}"))
}

/// Every broken relative link of the given markdown files, as `file:line: target (why)`,
/// and the number of relative links checked.
fn broken_links(root: &Path, files: &[PathBuf]) -> (Vec<String>, usize) {
    let mut broken_ones = Vec::new();
    let mut checked = 0;
    for file in files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        for (number, line) in prose_lines(&text) {
            for target in link_targets(line) {
                if is_url(&target) {
                    continue;
                }
                checked += 1;
                if let Some(why) = broken(root, file, &target) {
                    broken_ones.push(format!("{shown}:{number}: {target} ({why})"));
                }
            }
        }
    }
    (broken_ones, checked)
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let root = root();
    let files = markdown_files(&root);
    assert!(files.len() > 1, "no markdown files under docs/");
    let (broken, checked) = broken_links(&root, &files);
    assert!(
        broken.is_empty(),
        "{} broken link(s) in README.md and docs/:\n{}",
        broken.len(),
        broken.join("\n")
    );
    // The README links to the docs pages: a parser that found nothing would pass vacuously.
    assert!(checked >= 10, "only {checked} relative links found");
}

#[test]
fn links_are_read_as_github_reads_them() {
    let line =
        "See [a](docs/a.md#b-c), ![img](x.png \"t\"), `[no](code.md)` and [u](https://x.y/).";
    assert_eq!(
        link_targets(line),
        ["docs/a.md#b-c", "x.png", "https://x.y/"]
    );
    assert_eq!(link_targets("[ref]: ../rules.md"), ["../rules.md"]);
    assert_eq!(link_targets("[p](a_(b).md)"), ["a_(b).md"]);
    assert!(is_url("https://example.com") && is_url("mailto:a@b.c"));
    assert!(!is_url("docs/api.md#player-specs") && !is_url("#anchor"));
    assert_eq!(slug("Training: `loazero run`"), "training-loazero-run");
    assert_eq!(
        slug("Lines of Action — the rules"),
        "lines-of-action--the-rules"
    );
    assert_eq!(
        slug("Is it stronger than alpha-beta?"),
        "is-it-stronger-than-alpha-beta"
    );
    assert_eq!(slug("A [link](x.md) in_it"), "a-link-in_it");
    let text = "# T\n```sh\n# not a heading\n[x](missing.md)\n```\n## T\n";
    assert_eq!(anchors(text).into_iter().collect::<Vec<_>>(), ["t", "t-1"]);
    assert_eq!(prose_lines(text), [(1, "# T"), (6, "## T")]);
}

#[test]
fn a_broken_link_is_named_with_its_file_and_line() {
    let dir = std::env::temp_dir().join(format!("loazero-docs-links-{}", std::process::id()));
    fs::create_dir_all(dir.join("docs")).unwrap();
    fs::write(dir.join("docs/b.md"), "# B page\n## Part two\n").unwrap();
    let readme =
        "# R\n[ok](docs/b.md#part-two)\n[gone](docs/c.md)\n[bad](docs/b.md#part-3)\n[self](#r)\n";
    fs::write(dir.join("README.md"), readme).unwrap();
    let files = markdown_files(&dir);
    let (broken, checked) = broken_links(&dir, &files);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(checked, 4);
    assert_eq!(
        broken,
        [
            "README.md:3: docs/c.md (no such file)",
            "README.md:4: docs/b.md#part-3 (no heading #part-3)"
        ]
    );
}
