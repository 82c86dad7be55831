//! The SHA-256 of a streamed script for the review page: its file read once more, each block
//! checked against what the run used ([`Rehash`]), on a thread of the lowest priority, so that it
//! takes a core only when the run leaves one idle (during the simulation and the charts);
//! whoever needs the hash first finishes it, a few blocks at a time, so a busy machine that
//! never lets that thread run delays nothing.

use crate::upstream::script::{Rehash, ScriptCalls};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Blocks (of 64 rows, about a KiB) hashed at a time by whoever holds the hash.
const STEP_BLOCKS: usize = 64;

/// A streamed script being hashed ([`ScriptHash::start`]).
pub struct ScriptHash {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the hashing thread and its owner share.
struct Shared {
    rows: Arc<ScriptCalls>,
    rehash: Mutex<Rehash>,
    /// Set when the owner no longer wants the hash.
    stop: AtomicBool,
}

impl Shared {
    /// Hashes the next blocks: the hash once every block was, `None` inside when the file
    /// changed since the first pass.
    fn step(&self) -> Option<Option<[u8; 32]>> {
        let Some(script) = self.rows.streamed() else { return Some(None) };
        script.rehash(&mut self.rehash.lock().unwrap_or_else(PoisonError::into_inner), STEP_BLOCKS)
    }
}

impl ScriptHash {
    /// Starts hashing the file of `rows` when it is streamed (a held script: `None`).
    pub fn start(rows: &Arc<ScriptCalls>) -> Option<ScriptHash> {
        let rehash = Mutex::new(rows.streamed()?.start_rehash());
        let shared = Arc::new(Shared { rows: Arc::clone(rows), rehash, stop: AtomicBool::new(false) });
        let theirs = Arc::clone(&shared);
        let hash = move || {
            lowest_priority();
            while !theirs.stop.load(Ordering::Relaxed) {
                if theirs.step().is_some() {
                    break;
                }
            }
        };
        let thread = std::thread::Builder::new().name("script hash".into()).spawn(hash).ok();
        Some(ScriptHash { shared, thread })
    }

    /// The file's SHA-256, the blocks not yet hashed hashed here; `None` when the file changed
    /// since the first pass ([`ScriptCalls::check`] then says where).
    pub fn finish(mut self) -> Option<[u8; 32]> {
        let hash = loop {
            if let Some(hash) = self.shared.step() {
                break hash;
            }
        };
        self.stop();
        hash
    }

    /// Stops the thread and waits for it (a step at most).
    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(Err(panic)) = self.thread.take().map(std::thread::JoinHandle::join) {
            std::panic::resume_unwind(panic);
        }
    }
}

impl Drop for ScriptHash {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.stop();
        }
    }
}

/// Gives the calling thread the lowest priority (nice 19: Linux keeps a nice value per thread).
#[cfg(target_os = "linux")]
fn lowest_priority() {
    // SAFETY: gettid and setpriority take no pointers; a refusal leaves the priority as it was.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19);
    }
}

/// Elsewhere a nice value is the whole process's: the thread keeps its priority.
#[cfg(not(target_os = "linux"))]
fn lowest_priority() {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::run::report_inputs;
    use crate::scenario::{Scenario, Source};

    /// A script of 30,000 rows (larger than a page embeds) in `dir`: the scenario it makes, its
    /// path and its text.
    fn week(dir: &std::path::Path) -> (Scenario, std::path::PathBuf, String) {
        let mut text = String::from("t_ms,latency_ms,ok\n");
        for i in 0..30_000u64 {
            text += &format!("{},{},{}\n", i * 1_000 + i % 7, 100 + i % 50, u8::from(i % 13 != 0));
        }
        let path = dir.join("week.csv");
        std::fs::write(&path, &text).unwrap();
        (Scenario::from_script(&path).unwrap(), path, text)
    }

    fn rows(scenario: &Scenario) -> &Arc<ScriptCalls> {
        let Source::Script { rows, .. } = &scenario.source else { panic!("a script") };
        rows
    }

    #[test]
    fn the_hash_is_the_files_whoever_finishes_it_and_fills_the_page_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let (scenario, _, text) = week(dir.path());
        let expected = crate::sweep::shard::sha256_hex(text.as_bytes());
        // Finished at once (by the caller, mostly) or after its thread had time.
        let now = ScriptHash::start(rows(&scenario)).unwrap().finish();
        let later = ScriptHash::start(rows(&scenario)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(now.map(|h| crate::sweep::shard::hex(&h)), Some(expected.clone()));
        assert_eq!(later.finish(), now);
        // The page's inputs list the script unhashed until the hash fills it in.
        let inputs = report_inputs(&scenario, 1, "breakerlab run", true);
        assert_eq!(inputs.files.iter().filter(|f| f.sha256.is_empty()).count(), 1);
        let hashing = ScriptHash::start(rows(&scenario));
        let inputs = super::super::run::with_script_hash(inputs, hashing, &scenario).unwrap();
        assert_eq!(inputs.files.iter().map(|f| f.sha256.as_str()).collect::<Vec<_>>(), [expected.as_str()]);
        // Dropped unfinished: its thread stops.
        drop(ScriptHash::start(rows(&scenario)));
    }

    #[test]
    fn a_script_changed_since_the_run_read_it_fails_the_page() {
        let dir = tempfile::tempdir().unwrap();
        let (scenario, path, text) = week(dir.path());
        std::fs::write(&path, text.replacen("\n100002,", "\n100003,", 1)).unwrap();
        let inputs = report_inputs(&scenario, 1, "breakerlab run", true);
        let err = super::super::run::with_script_hash(inputs, ScriptHash::start(rows(&scenario)), &scenario)
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 66: the file changed while it was read"), "{err}");
        assert!(ScriptHash::start(&Arc::new(ScriptCalls::Held(Vec::new()))).is_none(), "a held script");
    }
}
