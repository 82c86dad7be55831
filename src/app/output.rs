//! One output folder, written all at once. Every command that writes files goes through
//! [`OutputDir`]: it owns the file names, the one place where bytes reach the disk, and the
//! finishing step (charts, inputs.toml, report pages). The whole set is written into a fresh
//! sibling folder (`.<name>.tmp.<pid>.<n>`), each file synced, and swapped in at the end with one
//! atomic exchange of the two folders, so a reader or an interrupted run only ever sees all of
//! the old set or all of the new one. A lock file beside the folder (`.<name>.lock`) serializes
//! writers: a second run into the same folder waits for the first to finish, then swaps in its
//! own complete set. Temporary folders left by killed runs are removed by the next writer.

use crate::report::charts::{self, ChartOptions};
use crate::report::contents::Contents;
use crate::report::folder::{self, parse::Reader};
use crate::report::page::{self, ReportInputs};
use crate::scenario::InputError;
use crate::{Error, Result};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// summary.csv: one row per scenario × configuration.
pub const SUMMARY_CSV: &str = "summary.csv";
/// runs.csv: one row per cell of a sweep or comparison.
pub const RUNS_CSV: &str = "runs.csv";
/// pareto.csv: the configurations on each Pareto front.
pub const PARETO_CSV: &str = "pareto.csv";
/// transitions.csv: every state change.
pub const TRANSITIONS_CSV: &str = "transitions.csv";
/// explain.csv: the evidence behind every state change and at the incidents' moments.
pub const EXPLAIN_CSV: &str = "explain.csv";
/// timeline.csv: per time bin traffic, failures and state occupancy.
pub const TIMELINE_CSV: &str = "timeline.csv";
/// incidents.csv: the ground-truth windows scoring used.
pub const INCIDENTS_CSV: &str = "incidents.csv";
/// latency.csv: user latency histograms.
pub const LATENCY_CSV: &str = "latency.csv";
/// One row per scripted call (scripted runs only).
pub const CALLS_CSV: &str = "calls.csv";
/// objective.toml: a sweep's objective and constraints.
pub const OBJECTIVE_TOML: &str = "objective.toml";
/// recommendation.txt: the explained recommendation.
pub const RECOMMENDATION_TXT: &str = "recommendation.txt";
/// recommended.txt: the chosen configuration's label.
pub const RECOMMENDED_TXT: &str = "recommended.txt";
/// review.toml: the review page's opening (decision table, verdict on the baseline).
pub const REVIEW_TOML: &str = crate::sweep::review::REVIEW_TOML;
/// shard.toml: what one shard of a sweep ran, for `merge`.
pub const SHARD_TOML: &str = crate::sweep::shard::MANIFEST_FILE;

/// Every fixed file name breakerlab writes into an output folder (charts named per family
/// aside): a file of one of these names not written by the current command is dropped when
/// its set replaces the folder; any other file is kept.
const OUR_FILES: [&str; 22] = [
    SUMMARY_CSV,
    RUNS_CSV,
    PARETO_CSV,
    TRANSITIONS_CSV,
    EXPLAIN_CSV,
    TIMELINE_CSV,
    INCIDENTS_CSV,
    LATENCY_CSV,
    CALLS_CSV,
    OBJECTIVE_TOML,
    RECOMMENDATION_TXT,
    RECOMMENDED_TXT,
    REVIEW_TOML,
    SHARD_TOML,
    crate::sweep::stage_plan::PLAN_FILE,
    page::INPUTS_FILE,
    page::REPORT_HTML,
    page::REPORT_MD,
    charts::TIMELINE_PNG,
    charts::PARETO_PNG,
    charts::COMPARISON_PNG,
    charts::LATENCY_PNG,
];

/// Files kept open until the swap at most (older ones are synced as new ones come), so a set of
/// many charts never holds many descriptors.
const UNSYNCED_LIMIT: usize = 32;

/// Distinguishes temporary folders of one process.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// What the finished folder keeps of the folder it replaces.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Keep {
    /// Files breakerlab did not write (a note the user left); every output of breakerlab is
    /// replaced by the new set.
    Foreign,
    /// Every file but the charts and pages, which are drawn anew (`breakerlab report DIR`).
    AllButPages,
}

/// The review page to finish a folder with: the charts its files allow and the page.
#[derive(Clone, Debug)]
pub struct Page {
    /// What the page shows to reproduce the run, saved as inputs.toml; `None`: the folder's own
    /// inputs.toml (`report DIR`), else a page titled after the folder.
    pub inputs: Option<ReportInputs>,
    /// Zoom and heatmap metric.
    pub charts: ChartOptions,
}

/// An output folder being written: files go to a private sibling folder until [`finish`]
/// swaps it in. Dropped unfinished, it removes its temporary folder and leaves the old one.
///
/// [`finish`]: OutputDir::finish
#[derive(Debug)]
pub struct OutputDir {
    /// The folder as the user named it (for printed paths).
    shown: PathBuf,
    /// The folder's real location (symbolic links and `..` resolved).
    target: PathBuf,
    /// The private folder the set is written into.
    staging: PathBuf,
    /// Held until the set is swapped in.
    _lock: File,
    /// Names written, in order.
    written: Vec<String>,
    /// Files written whose sync to disk is under way.
    unsynced: Syncs,
    /// The set this one replaces, as found when this one was started.
    replaced: Replaced,
}

/// The files of the set an output folder's new set replaces, listed when the new set is started
/// so that their removal starts the moment the swap is done.
#[derive(Debug, Default)]
struct Replaced {
    /// The files' names, the largest first.
    names: Vec<std::ffi::OsString>,
    /// Those of at least [`FORGET_MIN_BYTES`] that no other folder links, dropping their cached
    /// pages ([`forget_cached`]) on a thread of their own from the moment the new set is
    /// started: the memory they free is what the new set's files are then written into.
    forgetting: Forgetting,
}

/// The thread dropping the replaced set's cached pages ([`Replaced::forgetting`]); waited for
/// when dropped, so that no thread of a set outlives it.
#[derive(Debug, Default)]
struct Forgetting(Option<std::thread::JoinHandle<()>>);

impl Drop for Forgetting {
    fn drop(&mut self) {
        if let Some(thread) = self.0.take() {
            let _ = thread.join();
        }
    }
}

/// A set's charts and pages, drawn ([`OutputDir::draw`]): the charts written into the private
/// folder (not yet listed in the set), the pages still to be written.
#[derive(Debug)]
struct Drawn {
    /// The charts' file names.
    charts: Vec<String>,
    /// The charts' files, written, syncing.
    written: Result<Syncs>,
    /// inputs.toml.
    inputs: String,
    html: String,
    md: String,
}

/// A file's sync to disk under way on its own thread.
type Syncing = std::thread::JoinHandle<std::io::Result<()>>;

/// Files of a set each synced to disk on a thread of its own, waited for before the swap (the
/// oldest of [`UNSYNCED_LIMIT`] at once as more come), so the disk writes one file while the
/// next is made, and the syncs of a set wait together instead of one after the other (on ext4
/// each sync that waits alone waits for a journal commit of its own). Dropped, it waits for
/// the syncs under way.
#[derive(Debug, Default)]
struct Syncs(Vec<(PathBuf, Syncing)>);

impl Syncs {
    /// Waits for the oldest sync when [`UNSYNCED_LIMIT`] are under way.
    fn make_room(&mut self) -> Result<()> {
        if self.0.len() >= UNSYNCED_LIMIT {
            let (shown, oldest) = self.0.remove(0);
            joined(oldest).map_err(|e| Error::io(shown, e))?;
        }
        Ok(())
    }

    /// Starts syncing `file` (`shown` names it in errors).
    fn start(&mut self, shown: PathBuf, file: File) -> Result<()> {
        self.make_room()?;
        let syncing = std::thread::Builder::new().spawn(move || file.sync_all());
        self.0.push((shown.clone(), syncing.map_err(|e| Error::io(shown, e))?));
        Ok(())
    }

    /// Takes over the syncs of `other`, in order.
    fn extend(&mut self, mut other: Syncs) -> Result<()> {
        for (shown, syncing) in std::mem::take(&mut other.0) {
            self.make_room()?;
            self.0.push((shown, syncing));
        }
        Ok(())
    }

    /// Waits for every sync, in order; the first failure is the error.
    fn wait(mut self) -> Result<()> {
        std::mem::take(&mut self.0)
            .into_iter()
            .try_for_each(|(shown, syncing)| joined(syncing).map_err(|e| Error::io(shown, e)))
    }
}

impl Drop for Syncs {
    fn drop(&mut self) {
        for (_, syncing) in self.0.drain(..) {
            if !std::thread::panicking() {
                let _ = syncing.join();
            }
        }
    }
}

/// Creates the file `name` in the set's private folder `staging` (replacing one carried over
/// from the old set), writes it with `fill` and starts its sync in `syncs`; errors name it in
/// the folder `shown`. Every file of a set reaches the disk here.
fn make(
    staging: &Path,
    shown: &Path,
    name: &str,
    fill: impl FnOnce(&mut (dyn std::io::Write + Send)) -> Result<()>,
    syncs: &mut Syncs,
) -> Result<()> {
    let path = staging.join(name);
    let io = |e| Error::io(shown.join(name), e);
    let _ = fs::remove_file(&path); // a carried-over file of the same name
    let file = File::options().write(true).create_new(true).open(&path).map_err(io)?;
    let mut buffered = std::io::BufWriter::new(file);
    fill(&mut buffered)?;
    let file = buffered.into_inner().map_err(|e| io(e.into_error()))?;
    syncs.start(shown.join(name), file)
}

/// The folder a command writes to: `out` if given, else `output/<name>`.
pub fn out_dir(out: Option<&Path>, name: &str) -> PathBuf {
    out.map_or_else(|| Path::new("output").join(name), Path::to_path_buf)
}

impl OutputDir {
    /// Prepares to write the set of `dir`: takes its lock (waiting for another writer to
    /// finish), removes temporaries of dead runs, and starts a private sibling folder that holds
    /// what `keep` keeps of the current one. A `dir` that is a file, or whose parent cannot be
    /// created, is bad input.
    pub fn create(dir: &Path, keep: Keep) -> Result<OutputDir> {
        let refuse = |why: String| Error::Input(InputError::file(dir, why));
        // Checked before anything is created: no `output/`, lock or temporary is left behind.
        if let Some(name) = dir.file_name()
            && (name.len() > crate::scenario::MAX_NAME_BYTES || name.to_string_lossy().contains('\0'))
        {
            return Err(refuse(format!(
                "the output folder's name is {} bytes long: give a name of at most {} bytes",
                name.len(),
                crate::scenario::MAX_NAME_BYTES
            )));
        }
        // The folder, or a folder above it (a shard's `--out`), may be a link to nothing.
        if let Some(link) = dir.ancestors().find(|a| {
            !a.as_os_str().is_empty()
                && !a.exists()
                && fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink())
        }) {
            let to = fs::read_link(link).map_or_else(|_| "?".into(), |t| t.display().to_string());
            return Err(Error::Input(InputError::file(
                link,
                format!(
                    "is a symbolic link to {to}, which leads to no folder (missing, or a loop of links): \
                     give --out a folder, or create the one the link points to"
                ),
            )));
        }
        if dir.exists() && !dir.is_dir() {
            return Err(refuse("the output folder is a file, not a folder".into()));
        }
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::create_dir_all(parent)
            .map_err(|e| refuse(format!("cannot create the output folder: {}", plain(&e))))?;
        let target = match dir.file_name() {
            Some(name) if !dir.exists() => real(parent, dir)?.join(name),
            _ => real(dir, dir)?,
        };
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Err(refuse("cannot write the output folder's set here: give a folder below it".into()));
        };
        let name = name.to_string_lossy().into_owned();
        let lock_path = parent.join(format!(".{name}.lock"));
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| refuse(format!("cannot create the output folder's lock: {}", plain(&e))))?;
        lock.lock().map_err(|e| Error::io(&lock_path, e))?;
        remove_stale(parent, &name)?;
        let staging = loop {
            let n = NEXT_TEMP.fetch_add(1, Ordering::Relaxed);
            let path = parent.join(format!(".{name}.tmp.{}.{n}", std::process::id()));
            match fs::create_dir(&path) {
                Ok(()) => break path,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(refuse(format!("cannot create the output folder: {}", plain(&e)))),
            }
        };
        let mut out = OutputDir {
            shown: dir.to_path_buf(),
            target,
            staging,
            _lock: lock,
            written: Vec::new(),
            unsynced: Syncs::default(),
            replaced: Replaced::default(),
        };
        out.replaced = out.carry_over(keep)?;
        Ok(out)
    }

    /// Links (or copies) the files of the current folder that `keep` keeps into the new one,
    /// and lists the current folder's files for their removal once the new set replaces them.
    fn carry_over(&self, keep: Keep) -> Result<Replaced> {
        let mut replaced = Replaced::default();
        if !self.target.is_dir() {
            return Ok(replaced);
        }
        let (mut sized, mut large) = (Vec::new(), Vec::new());
        let entries = fs::read_dir(&self.target).map_err(|e| Error::io(&self.target, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&self.target, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let from = entry.path();
            let meta = entry.metadata().map_err(|e| Error::io(&from, e))?;
            if meta.is_dir() {
                return Err(Error::Input(InputError::file(
                    &self.shown,
                    format!(
                        "the output folder holds a folder, `{name}`, that breakerlab did not write; \
                         give --out an empty folder or one breakerlab wrote"
                    ),
                )));
            }
            let kept = match keep {
                Keep::Foreign => !is_ours(&name),
                Keep::AllButPages => !is_page(&name),
            };
            let kept = kept && !is_old_temporary(&name);
            if kept && is_ours(&name) {
                // A file breakerlab reads back (a report redrawn from the folder's CSVs): a
                // FIFO, a device or a link loop in its place is refused, not read.
                crate::scenario::regular_file(&from)?;
            }
            if !kept && meta.is_file() && links(&meta) == 1 && meta.len() >= FORGET_MIN_BYTES {
                large.extend(File::open(&from).ok());
            }
            sized.push((meta.len(), entry.file_name()));
            if !kept {
                continue;
            }
            let to = self.staging.join(&name);
            if fs::hard_link(&from, &to).is_err() {
                fs::copy(&from, &to).map_err(|e| Error::io(&from, e))?;
            }
        }
        sized.sort_by(|a, b| b.cmp(a));
        replaced.names = sized.into_iter().map(|(_, name)| name).collect();
        if !large.is_empty() {
            replaced.forgetting =
                Forgetting(std::thread::Builder::new().spawn(move || forget_cached(&large)).ok());
        }
        Ok(replaced)
    }

    /// Writes one file of the set (synced to disk before the set is swapped in).
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let shown = self.shown.join(name);
        self.write_with(name, |w| w.write_all(bytes).map_err(|e| Error::io(&shown, e)))
    }

    /// A file of the set, open for reading: as written into the private folder, else as kept
    /// from the old set (`None`: the set has no such file).
    pub fn open(&self, name: &str) -> std::io::Result<Option<Reader<'_>>> {
        match File::open(self.staging.join(name)) {
            Ok(file) => Ok(Some(Box::new(std::io::BufReader::new(file)))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes one file of the set by streaming into it (for files too large to hold in memory,
    /// such as a shard's runs.csv, whose rows are written as the simulation produces them):
    /// `fill` writes, then the file is synced ([`Syncs`]) and listed in the set.
    pub fn write_with(
        &mut self,
        name: &str,
        fill: impl FnOnce(&mut (dyn std::io::Write + Send)) -> Result<()>,
    ) -> Result<()> {
        make(&self.staging, &self.shown, name, fill, &mut self.unsynced)?;
        self.written.push(name.to_string());
        Ok(())
    }

    /// Starts a file of the set that is written as the work goes (transitions.csv while the run
    /// simulates): it lives in the private folder like every file of the set, so an interrupted
    /// run leaves nothing of it behind. [`OutputDir::close`] adds it to the set.
    pub fn stream(&self, name: &str) -> Result<Stream> {
        Stream::create(self.staging.join(name), self.shown.join(name), name)
    }

    /// Adds a streamed file to the set (in the order of the files written).
    pub fn close(&mut self, stream: Stream) -> Result<()> {
        let Stream { file, shown, name, .. } = stream;
        let file = file.into_inner().map_err(|e| Error::io(&shown, e.into_error()))?;
        self.unsynced.start(shown, file)?;
        self.written.push(name);
        Ok(())
    }

    /// A scratch file in the private folder (`.<name>.part`), for a file of the set that is
    /// assembled from rows streamed earlier (explain.csv's body): never part of the set, and
    /// removed when dropped.
    pub fn scratch(&self, name: &str) -> Result<Scratch> {
        let part = format!(".{name}.part");
        Stream::create(self.staging.join(&part), self.shown.join(name), &part).map(Scratch)
    }

    /// Writes each `(name, bytes)` in order.
    pub fn write_all(&mut self, files: &[(&str, Vec<u8>)]) -> Result<()> {
        files.iter().try_for_each(|(name, bytes)| self.write(name, bytes))
    }

    /// Draws the charts `page` asks for of `contents` (what the command computed), writes
    /// inputs.toml and the report pages (when `page` is given), swaps the set in and returns
    /// the paths written, in order.
    pub fn finish(mut self, page: Option<(&Page, &Contents)>) -> Result<Vec<PathBuf>> {
        if let Some((page, contents)) = page {
            let drawn = self.draw(page, contents)?;
            self.finish_drawn(drawn)
        } else {
            self.finish_files()
        }
    }

    /// Reads the set's files again (`breakerlab report DIR`: the folder's files carried over)
    /// and finishes it with the charts and pages drawn from them.
    pub fn redraw(self, page: &Page) -> Result<Vec<PathBuf>> {
        let this = &self;
        let contents = folder::read(&self.shown, move |name| this.open(name))?;
        let charts = charts::draw_all(&contents, &page.charts);
        let drawn = charts.map_err(Error::from).and_then(|charts| self.render(page, &contents, charts));
        drop(contents);
        self.finish_drawn(drawn?)
    }

    /// Draws the charts of `contents` and renders the pages of `page`; the charts are written
    /// into the private folder as the page renders.
    fn draw(&mut self, page: &Page, contents: &Contents) -> Result<Drawn> {
        let charts = charts::draw_all(contents, &page.charts)?;
        self.render(page, contents, charts)
    }

    /// Writes `charts` into the private folder while the pages of `page` render.
    fn render(&self, page: &Page, contents: &Contents, charts: Vec<charts::Chart>) -> Result<Drawn> {
        let inputs = page.inputs.clone().or_else(|| contents.inputs.clone()).unwrap_or_else(|| {
            ReportInputs { title: self.shown.display().to_string(), ..ReportInputs::default() }
        });
        // The charts are written on another thread while this one renders the page.
        let (staging, shown) = (&self.staging, &self.shown);
        let (page, written) = std::thread::scope(|s| {
            let writing = s.spawn(|| {
                let mut syncs = Syncs::default();
                for chart in charts.iter().filter(|c| c.sentence.is_none()) {
                    let fill = |w: &mut (dyn std::io::Write + Send)| {
                        w.write_all(&chart.png).map_err(|e| Error::io(shown.join(&chart.name), e))
                    };
                    make(staging, shown, &chart.name, fill, &mut syncs)?;
                }
                Ok(syncs)
            });
            let page = page::render_report(contents, &charts, &inputs, shown);
            (page, writing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        let (html, md) = page?;
        let charts = charts.into_iter().filter(|c| c.sentence.is_none()).map(|c| c.name).collect();
        Ok(Drawn { charts, written, inputs: inputs.to_toml()?, html, md })
    }

    /// Writes the pages drawn, lists the charts and pages after the files, swaps the set in and
    /// returns the paths written, in order.
    fn finish_drawn(mut self, drawn: Drawn) -> Result<Vec<PathBuf>> {
        let names = self.write_drawn(drawn)?;
        self.written.extend(names);
        self.finish_files()
    }

    /// Swaps the set in and returns the paths written, in order.
    fn finish_files(mut self) -> Result<Vec<PathBuf>> {
        self.swap()?;
        Ok(self.written.iter().map(|n| self.shown.join(n)).collect())
    }

    /// Writes the pages of `drawn` beside its charts, unlisted; returns the names of both, in
    /// the order they are listed.
    fn write_drawn(&mut self, drawn: Drawn) -> Result<Vec<String>> {
        let Drawn { mut charts, written, inputs, html, md } = drawn;
        self.unsynced.extend(written?)?;
        for (name, text) in [(page::INPUTS_FILE, inputs), (page::REPORT_HTML, html), (page::REPORT_MD, md)] {
            let fill = |w: &mut (dyn std::io::Write + Send)| {
                w.write_all(text.as_bytes()).map_err(|e| Error::io(self.shown.join(name), e))
            };
            make(&self.staging, &self.shown, name, fill, &mut self.unsynced)?;
            charts.push(name.to_string());
        }
        Ok(charts)
    }

    /// Syncs every file of the set (the folder's entries while the files' syncs run), then
    /// replaces the folder by the new set in one step and removes the old set (on threads of
    /// their own, started at once, while the parent folder is synced).
    fn swap(&mut self) -> Result<()> {
        let unsynced = std::mem::take(&mut self.unsynced);
        let Replaced { names, forgetting } = std::mem::take(&mut self.replaced);
        let (staging, target) = (&self.staging, &self.target);
        let replacing = target.is_dir();
        std::thread::scope(|s| {
            let entries = File::open(staging).and_then(|d| d.sync_all());
            unsynced.wait()?;
            entries.map_err(|e| Error::io(staging, e))?;
            if replacing {
                exchange(staging, target).map_err(|e| Error::io(&self.shown, e))?;
            } else {
                fs::rename(staging, target).map_err(|e| Error::io(&self.shown, e))?;
            }
            let removing = replacing.then(|| remove_files(s, staging, &names, forgetting));
            if let Some(parent) = target.parent() {
                // The rename is durable once the parent folder is synced (best effort: some
                // file systems refuse to sync a folder).
                let _ = File::open(parent).and_then(|d| d.sync_all());
            }
            if let Some(removers) = removing {
                removers.into_iter().for_each(|r| drop(r.join()));
                // What was added to the old set after it was listed, and the folder itself.
                let _ = fs::remove_dir_all(staging);
            }
            Ok(())
        })
    }
}

/// Files smaller than this keep their cached pages until removed ([`forget_cached`]).
const FORGET_MIN_BYTES: u64 = 1 << 20;

/// Drops the cached pages of `files` (large files of a set about to be replaced). The pages
/// are clean: neither the disk nor a reader of the old set sees a change, but removing those
/// files after the swap then only frees their blocks (a week-long script's 28 MB calls.csv:
/// 4.9 ms instead of 8.3 ms), and the memory freed while the new set is written is memory the
/// new set's files are written into. Best effort.
#[cfg(target_os = "linux")]
fn forget_cached(files: &[File]) {
    for file in files {
        let _ = rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed);
    }
}

/// Where the system cannot be told to drop cached pages, removing the old set does it.
#[cfg(not(target_os = "linux"))]
fn forget_cached(_files: &[File]) {}

/// How many names a file has (1 where the system does not say).
#[cfg(unix)]
fn links(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn links(_meta: &fs::Metadata) -> u64 {
    1
}

impl Drop for OutputDir {
    /// Removes the temporary folder, if the swap did not: an unfinished new set.
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.staging);
    }
}

/// The result of a file's sync; a sync thread that panicked passes its panic on.
fn joined(syncing: Syncing) -> std::io::Result<()> {
    syncing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// A file being streamed into an output folder's private folder ([`OutputDir::stream`]).
#[derive(Debug)]
pub struct Stream {
    file: std::io::BufWriter<File>,
    path: PathBuf,
    /// The path as the user will see it, for errors.
    shown: PathBuf,
    name: String,
}

impl Stream {
    fn create(path: PathBuf, shown: PathBuf, name: &str) -> Result<Stream> {
        let _ = fs::remove_file(&path); // a carried-over file of the same name
        let file =
            File::options().write(true).create_new(true).open(&path).map_err(|e| Error::io(&shown, e))?;
        let file = std::io::BufWriter::new(file);
        Ok(Stream { file, path, shown, name: name.to_string() })
    }

    /// Maps an error of writing this file to one that names it.
    pub fn error(&self, e: std::io::Error) -> Error {
        Error::io(&self.shown, e)
    }
}

impl std::io::Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// A scratch file in an output folder's private folder ([`OutputDir::scratch`]): written, then
/// read back once from its start; removed when dropped.
#[derive(Debug)]
pub struct Scratch(Stream);

impl Scratch {
    /// The writer (errors name the file of the set it is for).
    pub fn writer(&mut self) -> &mut Stream {
        &mut self.0
    }

    /// Flushes what was written and reads it back from the start.
    pub fn reader(&mut self) -> Result<std::io::BufReader<File>> {
        use std::io::Write as _;
        self.0.file.flush().map_err(|e| self.0.error(e))?;
        File::open(&self.0.path).map(std::io::BufReader::new).map_err(|e| self.0.error(e))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0.path);
    }
}

/// Swaps the folders `a` and `b` atomically (Linux `renameat2(RENAME_EXCHANGE)`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).map_err(std::io::Error::from)
}

/// Swaps the folders `a` and `b`: where the system has no atomic exchange, `b` is moved aside
/// and `a` renamed into its place (a reader may briefly find no folder, never a mixed one).
#[cfg(not(target_os = "linux"))]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    let aside = a.with_extension("old");
    fs::rename(b, &aside)?;
    fs::rename(a, b)?;
    fs::rename(&aside, a)
}

/// `path` with symbolic links and `..` resolved.
fn real(path: &Path, shown: &Path) -> Result<PathBuf> {
    fs::canonicalize(path).map_err(|e| {
        Error::Input(InputError::file(shown, format!("cannot use the output folder: {}", plain(&e))))
    })
}

/// Threads that remove the files of a replaced set at once.
const REMOVERS: usize = 16;

/// Starts removing the files `names` (the largest first) of the folder `dir`, a replaced set no
/// longer reachable under the output folder's name: a share to each of up to [`REMOVERS`]
/// threads of `scope`, the first (which has the largest file) once `forgetting` has dropped
/// the large files' cached pages. Unlinking a file frees its blocks, which the disk (mounted
/// with `discard`, no journal) trims before the call returns, a wait of milliseconds per file:
/// the waits overlap instead of adding up (13 files under load: 52 ms one by one, 17 ms at
/// once). Errors are ignored, as a folder left behind is a stale temporary the next writer
/// removes. Returns the threads.
fn remove_files<'s>(
    scope: &'s std::thread::Scope<'s, '_>,
    dir: &'s Path,
    names: &'s [std::ffi::OsString],
    forgetting: Forgetting,
) -> Vec<std::thread::ScopedJoinHandle<'s, ()>> {
    let removers = names.len().min(REMOVERS);
    let mut forgetting = Some(forgetting);
    (0..removers)
        .map(|k| {
            let forgetting = forgetting.take();
            scope.spawn(move || {
                // The pages dropped first: removal then only frees blocks.
                drop(forgetting);
                names.iter().skip(k).step_by(removers).for_each(|n| drop(fs::remove_file(dir.join(n))));
            })
        })
        .collect()
}

/// Removes `.<name>.tmp.*` folders beside the output folder. The caller holds the folder's lock,
/// so no live writer owns one: they are what killed runs left behind.
fn remove_stale(parent: &Path, name: &str) -> Result<()> {
    let prefix = format!(".{name}.tmp.");
    let entries = fs::read_dir(parent).map_err(|e| Error::io(parent, e))?;
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let path = entry.path();
            let removed = if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
            removed.map_err(|e| Error::io(&path, e))?;
        }
    }
    Ok(())
}

/// A file breakerlab writes into output folders.
fn is_ours(name: &str) -> bool {
    OUR_FILES.contains(&name) || is_chart(name)
}

/// A chart or report page, drawn anew by every finishing step.
fn is_page(name: &str) -> bool {
    is_chart(name) || [page::REPORT_HTML, page::REPORT_MD].contains(&name)
}

fn is_chart(name: &str) -> bool {
    [charts::TIMELINE_PNG, charts::PARETO_PNG, charts::COMPARISON_PNG, charts::LATENCY_PNG].contains(&name)
        || (name.starts_with("heatmap_") && name.ends_with(".png"))
}

/// A per-file temporary an earlier breakerlab (which wrote files one by one) left in the folder.
fn is_old_temporary(name: &str) -> bool {
    name.starts_with('.') && name.contains(".tmp")
}

/// An I/O error in words, without the "(os error N)" suffix.
fn plain(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::NotADirectory => "a part of the path is a file, not a folder".into(),
        std::io::ErrorKind::AlreadyExists => "a file of that name exists".into(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn the_new_set_replaces_ours_and_keeps_foreign_files() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        fs::create_dir(&dir).unwrap();
        // calls.csv: a scripted run's, left by an earlier run into the same folder.
        for name in [
            "summary.csv",
            "heatmap_a_b_c.png",
            "pareto.csv",
            "calls.csv",
            "notes.txt",
            ".summary.csv.tmp.7.0",
        ] {
            fs::write(dir.join(name), b"old").unwrap();
        }
        let mut out = OutputDir::create(&dir, Keep::Foreign).unwrap();
        out.write(SUMMARY_CSV, b"new").unwrap();
        // Nothing shows before the swap.
        assert_eq!(fs::read(dir.join("summary.csv")).unwrap(), b"old");
        let files = out.finish(None).unwrap();
        assert_eq!(files, [dir.join("summary.csv")]);
        assert_eq!(names(&dir), ["notes.txt", "summary.csv"]);
        assert_eq!(fs::read(dir.join("summary.csv")).unwrap(), b"new");
        assert_eq!(names(root.path()), [".out.lock", "out"]);
    }

    #[test]
    fn a_large_replaced_file_is_forgotten_intact_then_removed() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        fs::create_dir(&dir).unwrap();
        let big: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
        fs::write(dir.join("calls.csv"), &big).unwrap();
        fs::write(dir.join("notes.txt"), &big).unwrap();
        // Dropping the cached pages changes nothing a reader sees.
        forget_cached(&[File::open(dir.join("calls.csv")).unwrap()]);
        assert!(fs::read(dir.join("calls.csv")).unwrap() == big);
        let mut out = OutputDir::create(&dir, Keep::Foreign).unwrap();
        out.write(SUMMARY_CSV, b"new").unwrap();
        out.finish(None).unwrap();
        assert_eq!(names(&dir), ["notes.txt", "summary.csv"]);
        // The kept file (linked into the new set, so left cached) is whole.
        assert!(fs::read(dir.join("notes.txt")).unwrap() == big);
        assert_eq!(names(root.path()), [".out.lock", "out"]);
    }

    #[test]
    fn the_replaced_set_is_removed_whole_even_what_came_after_it_was_listed() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        fs::create_dir(&dir).unwrap();
        let big = vec![7u8; 2 << 20];
        for (name, bytes) in [("calls.csv", &big[..]), ("summary.csv", b"old"), ("timeline.png", b"old")] {
            fs::write(dir.join(name), bytes).unwrap();
        }
        let mut out = OutputDir::create(&dir, Keep::Foreign).unwrap();
        assert_eq!(out.replaced.names[0], "calls.csv", "the largest first");
        assert!(out.replaced.forgetting.0.is_some());
        // A file of ours that shows up in the old folder while the new set is written.
        fs::write(dir.join("latency.csv"), b"late").unwrap();
        out.write(SUMMARY_CSV, b"new").unwrap();
        out.finish(None).unwrap();
        assert_eq!(names(&dir), ["summary.csv"]);
        assert_eq!(names(root.path()), [".out.lock", "out"]);
    }

    #[test]
    fn more_files_than_are_kept_open_all_reach_the_set() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        let mut out = OutputDir::create(&dir, Keep::Foreign).unwrap();
        let n = UNSYNCED_LIMIT + 8;
        for i in 0..n {
            out.write(&format!("heatmap_{i}.png"), format!("chart {i}").as_bytes()).unwrap();
        }
        assert_eq!(out.unsynced.0.len(), UNSYNCED_LIMIT, "the oldest were synced as more came");
        assert_eq!(out.finish(None).unwrap().len(), n);
        for i in 0..n {
            assert_eq!(
                fs::read(dir.join(format!("heatmap_{i}.png"))).unwrap(),
                format!("chart {i}").as_bytes()
            );
        }
    }

    #[test]
    fn unfinished_sets_and_dead_temporaries_leave_no_trace() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sub").join("out");
        let mut out = OutputDir::create(&dir, Keep::Foreign).unwrap();
        out.write(SUMMARY_CSV, b"x").unwrap();
        drop(out);
        assert_eq!(names(&root.path().join("sub")), [".out.lock"]);
        // A killed run's folder is removed by the next writer.
        let dead = root.path().join("sub").join(".out.tmp.999999.0");
        fs::create_dir(&dead).unwrap();
        fs::write(dead.join("summary.csv"), b"half").unwrap();
        let out = OutputDir::create(&dir, Keep::Foreign).unwrap();
        assert!(!dead.exists());
        out.finish(None).unwrap();
        assert_eq!(names(&root.path().join("sub")), [".out.lock", "out"]);
        assert!(names(&dir).is_empty());
    }

    #[test]
    fn report_keeps_every_file_but_the_pages() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        fs::create_dir(&dir).unwrap();
        for name in ["summary.csv", "timeline.png", "inputs.toml", "report.md"] {
            fs::write(dir.join(name), b"old").unwrap();
        }
        let out = OutputDir::create(&dir, Keep::AllButPages).unwrap();
        assert_eq!(names(&out.staging), ["inputs.toml", "summary.csv"]);
    }

    #[test]
    fn a_file_or_an_uncreatable_folder_is_bad_input() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("taken");
        fs::write(&file, b"x").unwrap();
        let e = OutputDir::create(&file, Keep::Foreign).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("is a file"), "{e}");
        let e = OutputDir::create(&file.join("below"), Keep::Foreign).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("cannot create the output folder"), "{e}");
        let nested = root.path().join("nested");
        fs::create_dir_all(nested.join("inner")).unwrap();
        let e = OutputDir::create(&nested, Keep::Foreign).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("`inner`"), "{e}");
    }
}
