use super::super::{Extractive, Input, Level, Summarizer};
use crate::tokenize::{Counter, Tokenizer};

#[test]
fn room_that_redundant_names_free_is_filled_until_nothing_more_fits() {
    // Two leaves of one span. Condensed with room for both, the paths the second notes
    // line shows drop out as redundant only after that line is taken, which frees room
    // for the seen path skipped before it: a third round takes it.
    let first = "Summary of conversation messages 1-10 (extractive; the originals stay readable with Expand):\nUser requests:\n- a\nTool calls (bash):\n- aaaa aaaaa aa_a___/aa__b__.toml a__b_a_.txt ./aa__/aa_/a_a.p …\nFiles: ./aa__/aa_/a_a.py\nAssistant notes:\n- a/a___/a_.py ./a/a__a/axc.py\n- aaca_/a_ayp_.py a_caoe/aqaa_.toml /testbed/cp/dc_/bqac_.py a_a__b.py ./aaebf_.toml\n";
    let second = "Summary of conversation messages 1-10 (extractive; the originals stay readable with Expand):\nTool calls (read_file):\n- {\"path\":\"./a_/a_bf_.py aulba ajjpsf cbe pboe a\"}\nErrors seen:\n- AaaError: ueezau\nFiles seen in output: a__a___/a_ay_.py, a/a.py\nAssistant notes:\n- ./a.py yxagv_cgk\n";
    let counter = Counter::new(Tokenizer::O200kBase, 0);
    let children = [first.to_string(), second.to_string()];
    let room = counter.text(first) + counter.text(second) + 20;
    let condensed = Extractive.summarize(
        &Input {
            messages: &[],
            summaries: &children,
            previous: None,
            first_seq: 1,
            last_seq: 9,
            target_tokens: room,
        },
        Level::Normal,
        &counter,
    );
    assert!(counter.text(&condensed) <= room);
    assert!(condensed.contains("a__a___/a_ay_.py"), "{condensed}");
    assert!(!condensed.contains("Not listed for size"), "{condensed}");
}
