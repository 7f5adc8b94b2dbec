use super::*;

#[test]
fn error_lines_are_named_errors_and_the_ends_of_tracebacks() {
    let output = "Traceback (most recent call last):\n  File \"x.py\", line 1\n    boom()\nKeyError: 'name'\nok\nerror: could not compile";
    assert_eq!(
        error_lines(output),
        vec!["KeyError: 'name'", "error: could not compile"]
    );
    let traceback = "Traceback (most recent call last):\n  File \"/a/b.py\", line 2\nStopIteration";
    assert_eq!(error_lines(traceback), vec!["StopIteration"]);
}

#[test]
fn source_lines_a_listing_shows_are_not_errors_and_closing_tags_are_not_paths() {
    // What `cat` of a Python file shows: block openers naming an error or a failure.
    let listing = "<returncode>0</returncode>\n<output>\ntry:\n    x = items[0]\nexcept IndexError:\n    pass\nif not found:\n    raise KeyError(key)\nclass ParseError(Exception):\n</output>";
    assert!(
        error_lines(listing).is_empty(),
        "{:?}",
        error_lines(listing)
    );
    assert!(failure_lines(listing).is_empty());
    assert!(paths(listing).is_empty(), "{:?}", paths(listing));
    // Reported errors and failures still count, inside the same markup.
    let failed =
        "<output>\nIndexError: list index out of range\nFAILED tests/test_a.py::test_b\n</output>";
    assert_eq!(
        error_lines(failed),
        vec!["IndexError: list index out of range"]
    );
    assert_eq!(
        failure_lines(failed),
        vec!["FAILED tests/test_a.py::test_b"]
    );
    assert_eq!(paths("see </output> and ./a/b.py"), vec!["./a/b.py"]);
    // A line starting with a keyword's letters is not a block opener.
    let reported = "trying the import... ImportError:\nelsewhere: lookup failed:";
    assert_eq!(
        error_lines(reported),
        vec!["trying the import... ImportError:"]
    );
    assert_eq!(failure_lines(reported), vec!["elsewhere: lookup failed:"]);
}
