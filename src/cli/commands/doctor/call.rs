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
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| e.to_string())?;
    let mut input = child.stdin.take().expect("piped");
    let bytes = stdin.as_bytes().to_vec();
    let hold = until.is_some();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
        let _ = input.flush();
        // Returned to be kept open, or dropped here (closed).
        hold.then_some(input)
    });
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut out = child.stdout.take().expect("piped");
    let sink = Arc::clone(&stdout);
    let tx = done_tx.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().expect("not poisoned").extend_from_slice(&buf[..n]);
        }
        let _ = tx.send(());
    });
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
            && answered_line(&stdout.lock().expect("not poisoned"), text)
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
    // The readers end when the last holder of the pipes exits; a process that left the group
    // and holds them is not waited for.
    for _ in 0..2 {
        let _ = done_rx.recv_timeout(Duration::from_secs(2));
    }
    let text = |b: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&b.lock().expect("not poisoned")).into_owned();
    let code = if answered { None } else { status.and_then(|s| s.code()) };
    Ok(Output { code, stdout: text(&stdout), stderr: text(&stderr) })
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
