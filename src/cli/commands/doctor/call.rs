//! Running a runtime's CLI or one of msd's hooks for doctor, bounded in time: a CLI that hangs
//! (waiting for a network, a login, a terminal) is stopped with every process it started and
//! reported, and doctor goes on.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a call printed.
pub(super) struct Output {
    /// Its exit code (`None`: stopped by doctor once it had answered, or by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with `stdin` and returns what it printed. With `until`, stdin stays open (a CLI
/// serving requests until its input ends) until a whole line of stdout holds that text, and then
/// the CLI is stopped; without, stdin is closed once written. Past `timeout` the CLI and the
/// processes it started are killed and the call fails.
pub(super) fn call(cmd: &mut Command, stdin: &str, until: Option<&str>, timeout: Duration) -> Result<Output, String> {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    // Stdout goes to an unnamed file, not a pipe: a Node CLI that calls `process.exit()` after a
    // large write to a pipe loses what the pipe had not taken yet (`opencode debug config` came
    // back cut at 64 KiB when the reader was slow); a write to a file completes before exit.
    let out = tempfile::tempfile().map_err(|e| format!("a file for its output: {e}"))?;
    let out_child = out.try_clone().map_err(|e| format!("a file for its output: {e}"))?;
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(out_child).stderr(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
    let mut input = child.stdin.take().expect("piped");
    let bytes = stdin.as_bytes().to_vec();
    let hold = until.is_some();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
        let _ = input.flush();
        // Returned to be kept open, or dropped here (closed).
        hold.then_some(input)
    });
    let mut stdout = Vec::new();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let mut err = child.stderr.take().expect("piped");
    let esink = Arc::clone(&stderr);
    std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        *esink.lock().expect("not poisoned") = s;
        let _ = done_tx.send(());
    });
    let deadline = Instant::now() + timeout;
    let mut answered = false;
    let status = loop {
        if let Some(text) = until
            && {
                read_more(&out, &mut stdout);
                answered_line(&stdout, text)
            }
        {
            answered = true;
            stop(&mut child);
            break None;
        }
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(s) => break Some(s),
            None if Instant::now() >= deadline => {
                stop(&mut child);
                return Err(format!("no answer within {} s (stopped)", timeout.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    drop(writer.join());
    // The stderr reader ends when the last holder of the pipe exits; a process that left the
    // group and holds it is not waited for.
    let _ = done_rx.recv_timeout(Duration::from_secs(2));
    read_more(&out, &mut stdout);
    let text = |b: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&b.lock().expect("not poisoned")).into_owned();
    let code = if answered { None } else { status.and_then(|s| s.code()) };
    Ok(Output { code, stdout: String::from_utf8_lossy(&stdout).into_owned(), stderr: text(&stderr) })
}

/// Appends what the child wrote to `file` past what `buf` holds. Read at an offset, not
/// through the descriptor's position, which the child's copy shares and moves as it writes.
#[allow(clippy::large_stack_arrays, reason = "one 64 KiB read buffer per call, on a thread's stack of megabytes")]
fn read_more(file: &std::fs::File, buf: &mut Vec<u8>) {
    let mut chunk = [0u8; 64 * 1024];
    loop {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(file, &mut chunk, buf.len() as u64);
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(file, &mut chunk, buf.len() as u64);
        match n {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A complete line of `out` holds `text`.
fn answered_line(out: &[u8], text: &str) -> bool {
    let s = String::from_utf8_lossy(out);
    s.match_indices(text).any(|(i, _)| s[i..].contains('\n'))
}

/// Kills the child's process group (the child and what it started), then reaps the child.
fn stop(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let pid = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}
