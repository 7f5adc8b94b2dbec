//! Exact token counting: ctxd's counting speed on the recorded corpus and on 1 MB
//! adversarial inputs, per tokenizer; against, in the same run and round by round in
//! turns, the previous path (`bpe-openai`'s regex pre-tokenizer and backtracking
//! encoder, the reference the tests compare with) and Python tiktoken on the same texts
//! (`tiktoken_counts.py` beside this file, in the interpreter of `CTXD_TIKTOKEN_PYTHON`
//! or of `.ctxd/tiktoken-venv`, which `scripts/tiktoken-venv` makes); and what counting
//! a request's system prompt and tools costs with and without the replica's memo.
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use ctxd::tokenize::{Counter, TextCounts, Tokenizer, ToolDefinition};

/// The 1 MB inputs: no whitespace, so each is a few huge pieces, or many.
fn adversarial_inputs() -> Vec<(&'static str, String)> {
    const MB: usize = 1 << 20;
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut random_bytes = Vec::with_capacity(MB);
    while random_bytes.len() < MB {
        random_bytes.extend_from_slice(&xorshift(&mut state).to_le_bytes());
    }
    // Random bytes read as UTF-8 (invalid sequences become U+FFFD), cut to 1 MB.
    let mut as_utf8 = String::from_utf8_lossy(&random_bytes).into_owned();
    let mut cut = MB;
    while !as_utf8.is_char_boundary(cut) {
        cut -= 1;
    }
    as_utf8.truncate(cut);
    vec![
        ("1 MB 'a'", "a".repeat(MB)),
        ("1 MB '中'", "中".repeat(MB / 3)),
        ("1 MB random bytes as UTF-8", as_utf8),
        ("1 MB random [a-z0-9]", pseudo_random_text(MB)),
    ]
}

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn pseudo_random_text(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| ALPHABET[(xorshift(&mut state) % ALPHABET.len() as u64) as usize] as char)
        .collect()
}

fn best_of(rounds: usize, mut work: impl FnMut()) -> Duration {
    (0..rounds.max(1))
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .min()
        .unwrap()
}

fn megabytes_per_second(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

pub fn counting(texts: &[String], rounds: usize, full: bool) {
    let bytes: usize = texts.iter().map(String::len).sum();
    let inputs = adversarial_inputs();
    println!("## Token counting");
    println!();
    println!(
        "Corpus: {} texts, {:.2} MB. Single thread, best of {rounds} rounds.",
        texts.len(),
        bytes as f64 / 1e6,
    );
    println!();
    print!("tokenizer | vocabulary load ms | corpus MB/s | corpus tokens");
    for (name, _) in &inputs {
        print!(" | {name} ms");
    }
    println!();
    println!("---|---|---|---{}", "|---".repeat(inputs.len()));
    for (name, tokenizer) in [
        ("o200k_base", Tokenizer::O200kBase),
        ("cl100k_base", Tokenizer::Cl100kBase),
        ("deepseek_v3", Tokenizer::DeepseekV3),
    ] {
        let counter = Counter::new(tokenizer, 0);
        // Nothing has used the vocabulary yet in this process.
        let started = Instant::now();
        counter.text("warm the vocabulary");
        let load = started.elapsed();
        let mut tokens = 0;
        let corpus = best_of(rounds, || {
            tokens = texts.iter().map(|text| counter.text(text)).sum::<i64>();
        });
        print!(
            "{name} | {:.0} | {:.1} | {tokens}",
            load.as_secs_f64() * 1e3,
            megabytes_per_second(bytes, corpus)
        );
        for (_, input) in &inputs {
            let time = best_of(rounds, || {
                counter.text(input);
            });
            print!(" | {:.1}", time.as_secs_f64() * 1e3);
        }
        println!();
    }
    println!();
    against_others(texts, &inputs, rounds, full);
    request_counting(texts, rounds);
}

/// ctxd against the previous path and Python tiktoken, round by round in turns.
fn against_others(texts: &[String], inputs: &[(&'static str, String)], rounds: usize, full: bool) {
    let bytes: usize = texts.iter().map(String::len).sum();
    // The smoke run (cargo test) needs no Python.
    let mut tiktoken = if full {
        Tiktoken::start(texts, inputs)
    } else {
        Err("not run in the smoke run".into())
    };
    let version = match &tiktoken {
        Ok(tiktoken) => tiktoken.version.clone(),
        Err(reason) => format!("not run: {reason}"),
    };
    println!(
        "The same texts counted by ctxd (on a fresh thread each round, its memo of merged \
         pieces empty, and warm: every round on this thread), by the previous path \
         (bpe-openai's regex pre-tokenizer and backtracking encoder) and by Python {version} \
         (`encode_ordinary`; time inside Python only), in turns each round; best of {rounds} \
         rounds of wall time (and of the counting thread's CPU time, for one ratio), token \
         totals checked equal."
    );
    println!();
    println!(
        "encoding | ctxd fresh MB/s | ctxd warm MB/s | bpe-openai MB/s | tiktoken MB/s | \
         ctxd fresh ÷ tiktoken | ctxd warm ÷ tiktoken | same, CPU time | \
         ctxd warm ÷ bpe-openai | tokens"
    );
    println!("---|---|---|---|---|---|---|---|---|---");
    let mut adversarial = Vec::new();
    for (name, tokenizer, reference) in [
        ("o200k_base", Tokenizer::O200kBase, bpe_openai::o200k_base()),
        (
            "cl100k_base",
            Tokenizer::Cl100kBase,
            bpe_openai::cl100k_base(),
        ),
    ] {
        let counter = Counter::new(tokenizer, 0);
        let count = |texts: &[String]| texts.iter().map(|t| counter.text(t) as usize).sum();
        let mut best = [Duration::MAX; 4];
        // CPU time: ctxd warm, tiktoken.
        let mut best_cpu = [Duration::MAX; 2];
        let mut totals = [0usize; 4];
        for _ in 0..rounds.max(1) {
            let (fresh, total) = std::thread::scope(|scope| {
                scope
                    .spawn(|| timed(|| count(texts)))
                    .join()
                    .expect("counting thread")
            });
            let ((warm, warm_total), warm_cpu) = timed_both(|| count(texts));
            let (old, old_total) =
                timed(|| texts.iter().map(|t| reference.count(t.as_str())).sum());
            let theirs = tiktoken
                .as_mut()
                .ok()
                .map(|t| t.ask(&format!("corpus {name}")));
            best_cpu[0] = best_cpu[0].min(warm_cpu);
            if let Some((_, _, cpu)) = theirs {
                best_cpu[1] = best_cpu[1].min(cpu);
            }
            let theirs = theirs.map(|(wall, total, _)| (wall, total));
            let measured = [
                Some((fresh, total)),
                Some((warm, warm_total)),
                Some((old, old_total)),
                theirs,
            ];
            for (slot, (time, total)) in measured
                .into_iter()
                .enumerate()
                .filter_map(|(slot, found)| Some((slot, found?)))
            {
                best[slot] = best[slot].min(time);
                totals[slot] = total;
            }
        }
        check_totals(name, "the corpus", &totals, tiktoken.is_ok());
        let rate = |slot: usize| megabytes_per_second(bytes, best[slot]);
        let ratio = |a: usize, b: usize| best[b].as_secs_f64() / best[a].as_secs_f64();
        if tiktoken.is_ok() {
            println!(
                "{name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {}",
                rate(0),
                rate(1),
                rate(2),
                rate(3),
                ratio(0, 3),
                ratio(1, 3),
                best_cpu[1].as_secs_f64() / best_cpu[0].as_secs_f64(),
                ratio(1, 2),
                totals[1]
            );
        } else {
            println!(
                "{name} | {:.1} | {:.1} | {:.1} | – | – | – | – | {:.2} | {}",
                rate(0),
                rate(1),
                rate(2),
                ratio(1, 2),
                totals[1]
            );
        }
        for (input_name, input) in inputs {
            let mut best = [Duration::MAX; 3];
            let mut totals = [0usize; 3];
            for _ in 0..rounds.max(1) {
                let ours = timed(|| counter.text(input) as usize);
                let old = timed(|| reference.count(input.as_str()));
                let theirs = tiktoken
                    .as_mut()
                    .ok()
                    .map(|t| t.ask(&format!("input {name} {input_name}")))
                    .map(|(wall, total, _)| (wall, total));
                for (slot, (time, total)) in [Some(ours), Some(old), theirs]
                    .into_iter()
                    .enumerate()
                    .filter_map(|(slot, found)| Some((slot, found?)))
                {
                    best[slot] = best[slot].min(time);
                    totals[slot] = total;
                }
            }
            check_totals(name, input_name, &totals, tiktoken.is_ok());
            adversarial.push((name, *input_name, best, tiktoken.is_ok()));
        }
    }
    println!();
    println!("The 1 MB inputs, the same way (ms):");
    println!();
    println!("encoding | input | ctxd | bpe-openai | tiktoken");
    println!("---|---|---|---|---");
    let ms = |time: Duration| format!("{:.1}", time.as_secs_f64() * 1e3);
    for (name, input, best, ran) in adversarial {
        let theirs = if ran { ms(best[2]) } else { "–".into() };
        println!(
            "{name} | {input} | {} | {} | {theirs}",
            ms(best[0]),
            ms(best[1])
        );
    }
    println!();
}

fn timed(work: impl FnOnce() -> usize) -> (Duration, usize) {
    timed_both(work).0
}

/// `(wall time, total)` and this thread's CPU time for `work`: on a loaded machine a
/// long run is preempted more often than a short one, which CPU time does not count.
fn timed_both(work: impl FnOnce() -> usize) -> ((Duration, usize), Duration) {
    let (started, cpu) = (Instant::now(), thread_cpu());
    let total = work();
    ((started.elapsed(), total), thread_cpu().saturating_sub(cpu))
}

/// This thread's CPU time so far.
fn thread_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a pointer to a live local, which
    // is all it touches; on failure it stays zero.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// ctxd's, the previous path's and (when it ran) tiktoken's token totals are one number.
fn check_totals(encoding: &str, what: &str, totals: &[usize], tiktoken_ran: bool) {
    let compared = if tiktoken_ran {
        totals
    } else {
        &totals[..totals.len() - 1]
    };
    assert!(
        compared.iter().all(|&total| total == compared[0]),
        "{encoding} on {what}: token totals differ (ctxd …, bpe-openai, tiktoken): {totals:?}"
    );
}

/// Python tiktoken, answering requests in its own process.
struct Tiktoken {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    version: String,
    _folder: tempfile::TempDir,
}

impl Tiktoken {
    fn start(texts: &[String], inputs: &[(&str, String)]) -> Result<Tiktoken, String> {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let python = std::env::var_os("CTXD_TIKTOKEN_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join(".ctxd/tiktoken-venv/bin/python"));
        if !python.exists() {
            return Err(format!(
                "no interpreter at {} (make one with scripts/tiktoken-venv, or set \
                 CTXD_TIKTOKEN_PYTHON)",
                python.display()
            ));
        }
        let folder = tempfile::tempdir().map_err(|e| e.to_string())?;
        let texts_json = serde_json::json!({
            "corpus": texts,
            "inputs": inputs
                .iter()
                .map(|(name, text)| (name.to_string(), serde_json::Value::from(text.as_str())))
                .collect::<serde_json::Map<_, _>>(),
        });
        std::fs::write(folder.path().join("texts.json"), texts_json.to_string())
            .map_err(|e| e.to_string())?;
        for (name, tokenizer) in [
            ("o200k_base", bpe_openai::o200k_base()),
            ("cl100k_base", bpe_openai::cl100k_base()),
        ] {
            let bpe = &tokenizer.bpe;
            let mut lines = String::new();
            for rank in 0..bpe.num_tokens() as u32 {
                lines.push_str(&hex::encode(bpe.token_bytes(rank)));
                lines.push('\n');
            }
            std::fs::write(folder.path().join(format!("{name}.tokens")), lines)
                .map_err(|e| e.to_string())?;
        }
        let script = root.join("benches/parts/tiktoken_counts.py");
        let mut child = Command::new(&python)
            .arg(&script)
            .arg(folder.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", python.display()))?;
        let input = child.stdin.take().expect("piped stdin");
        let mut output = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut ready = String::new();
        output.read_line(&mut ready).map_err(|e| e.to_string())?;
        let Some(version) = ready.trim().strip_prefix("ready ") else {
            let _ = child.wait();
            return Err(format!("the script said {:?}", ready.trim()));
        };
        Ok(Tiktoken {
            version: version.to_string(),
            child,
            input,
            output,
            _folder: folder,
        })
    }

    /// The script's wall time, token total and CPU time for one request.
    fn ask(&mut self, request: &str) -> (Duration, usize, Duration) {
        writeln!(self.input, "{request}").expect("write to the tiktoken script");
        let mut line = String::new();
        self.output
            .read_line(&mut line)
            .expect("read from the tiktoken script");
        let mut words = line.split_whitespace();
        let tokens = words.next().and_then(|w| w.parse().ok());
        let mut seconds = words.map(|w| w.parse::<f64>().ok().map(Duration::from_secs_f64));
        match (tokens, seconds.next().flatten(), seconds.next().flatten()) {
            (Some(tokens), Some(wall), Some(cpu)) => (wall, tokens, cpu),
            _ => panic!("the tiktoken script answered {line:?} to {request:?}"),
        }
    }
}

impl Drop for Tiktoken {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What counting an agent-sized request's system prompt and tool definitions costs the
/// first time, and once the replica remembers them (every later BuildMessages and
/// CheckBudget with the same prompt and tools).
fn request_counting(texts: &[String], rounds: usize) {
    // A 16 KB system prompt and 24 tools of 1 KB description and 0.5 KB schema each, cut
    // from the corpus' text: about the size of a coding agent's.
    let mut corpus = texts.iter().flat_map(|text| text.chars());
    let mut take = |bytes: usize| {
        let mut text = String::new();
        while text.len() < bytes {
            match corpus.next() {
                Some(c) => text.push(c),
                None => break,
            }
        }
        text
    };
    let prompt = take(16 * 1024);
    let tools: Vec<ToolDefinition> = (0..24)
        .map(|index| ToolDefinition {
            name: format!("tool_{index}"),
            description: take(1024),
            parameters_json_schema: serde_json::json!({
                "type": "object",
                "properties": {"input": {"type": "string", "description": take(440)}},
                "required": ["input"],
            })
            .to_string(),
        })
        .collect();
    let request_bytes = prompt.len()
        + tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.parameters_json_schema.len())
            .sum::<usize>();
    println!(
        "A request's system prompt and tool definitions ({:.1} KB of corpus text: a 16 KB \
         prompt, 24 tools), counted as BuildMessages and CheckBudget count them: the first \
         time, and once the replica remembers their counts. Best of {} rounds of 100.",
        request_bytes as f64 / 1024.0,
        rounds
    );
    println!();
    println!("tokenizer | tokens | first time µs | remembered µs");
    println!("---|---|---|---");
    for (name, tokenizer) in [
        ("o200k_base", Tokenizer::O200kBase),
        ("cl100k_base", Tokenizer::Cl100kBase),
        ("deepseek_v3", Tokenizer::DeepseekV3),
    ] {
        let counter = Counter::new(tokenizer, 0);
        let count = |memo: &TextCounts| {
            counter.system_prompt(&prompt, memo) + counter.tool_definitions(&tools, memo)
        };
        let none = TextCounts::new(0);
        let memo = TextCounts::new(16 << 20);
        let tokens = count(&memo);
        assert_eq!(tokens, count(&none), "a remembered count is the count");
        // The first time: counted, then kept (an empty memo each time).
        let first = best_of(rounds, || {
            for _ in 0..100 {
                std::hint::black_box(count(&TextCounts::new(16 << 20)));
            }
        });
        let remembered = best_of(rounds, || {
            for _ in 0..100 {
                std::hint::black_box(count(&memo));
            }
        });
        println!(
            "{name} | {tokens} | {:.0} | {:.1}",
            first.as_secs_f64() * 1e6 / 100.0,
            remembered.as_secs_f64() * 1e6 / 100.0
        );
    }
    println!();
}
