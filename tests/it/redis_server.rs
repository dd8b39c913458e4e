//! Which `redis-server` program the shared-cache tests run, settled once per test process:
//! `$KIBITZ_TEST_REDIS_SERVER` if set, else `redis-server` on the `PATH`, else Debian's own
//! packages fetched without root: `apt-get download` of `redis-server`, `redis-tools` and
//! those of their libraries the machine lacks, unpacked with `dpkg-deb -x` under cargo's
//! `target/tmp` (so `CARGO_TARGET_DIR` is honoured and later runs reuse it) and run with
//! `LD_LIBRARY_PATH`. Key idea: `cargo test --release` needs no set-up step on a Debian or
//! Ubuntu machine with nothing but Rust, and still runs the real server. The unpacked tree
//! appears by one atomic rename, so a concurrent test process sees either none or all of it;
//! when nothing works, the panic says what to install.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// A `redis-server` that runs here: the program and, for one unpacked from Debian's
/// packages, the directories of its libraries.
#[derive(Clone, Debug)]
pub struct RedisServer {
    pub program: PathBuf,
    library_path: Option<OsString>,
}

/// Where the unpacked packages live between runs: `target/tmp/redis-server-debian`.
pub fn fetched_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("redis-server-debian")
}

/// The server every test of this process runs; panics, saying what to install, when there
/// is none and none can be fetched.
pub fn redis_server() -> &'static RedisServer {
    static SERVER: OnceLock<Result<RedisServer, String>> = OnceLock::new();
    match SERVER.get_or_init(find_or_fetch) {
        Ok(server) => server,
        Err(why) => panic!("{why}"),
    }
}

impl RedisServer {
    /// The program with the environment it needs (its libraries), ready for arguments.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.envs(self.library_env());
        command
    }

    /// What a shell script that runs `redis-server` by name needs: `PATH` with this
    /// program's directory first, and its libraries. (So the program must be called
    /// `redis-server`, as every package names it.)
    pub fn script_env(&self) -> Vec<(OsString, OsString)> {
        let dir = self.program.parent().unwrap_or(Path::new("."));
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![dir.to_path_buf()];
        dirs.extend(std::env::split_paths(&path));
        let path = std::env::join_paths(dirs).expect("PATH entries without ':'");
        let mut env = vec![(OsString::from("PATH"), path)];
        env.extend(self.library_env());
        env
    }

    /// `LD_LIBRARY_PATH` naming its libraries' directories, for one unpacked here.
    pub fn library_env(&self) -> Option<(OsString, OsString)> {
        let dirs = self.library_path.clone()?;
        Some((OsString::from("LD_LIBRARY_PATH"), dirs))
    }

    /// `redis-server --version`, or why it does not run.
    pub fn version(&self) -> Result<String, String> {
        let output = self
            .command()
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{} does not start: {e}", self.program.display()))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        } else {
            Err(format!(
                "{} --version failed: {}",
                self.program.display(),
                tail(&output)
            ))
        }
    }
}

fn find_or_fetch() -> Result<RedisServer, String> {
    if let Some(program) = std::env::var_os("KIBITZ_TEST_REDIS_SERVER") {
        let server = RedisServer {
            program: PathBuf::from(program),
            library_path: None,
        };
        server
            .version()
            .map_err(|why| format!("KIBITZ_TEST_REDIS_SERVER: {why}"))?;
        return Ok(server);
    }
    if let Some(program) = on_path("redis-server") {
        return Ok(RedisServer {
            program,
            library_path: None,
        });
    }
    fetched_debian().cloned().map_err(|why| {
        format!(
            "the shared-cache tests need a real redis-server (7.0 or newer, with TLS): \
             KIBITZ_TEST_REDIS_SERVER is not set, there is none on the PATH, and fetching \
             Debian's packages failed: {why}\n\
             Install one (Debian or Ubuntu: `apt-get install redis-server`; Fedora: \
             `dnf install redis`; macOS: `brew install redis`), or set \
             KIBITZ_TEST_REDIS_SERVER to the path of a redis-server."
        )
    })
}

/// The first executable regular file called `name` in a `PATH` directory (a name masked
/// by a non-file, e.g. `/dev/null` bound over it, does not count).
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// Debian's server unpacked in [`fetched_dir`], fetched first if it is not there yet: once
/// per test process, whichever test asks first (the others wait for it).
pub fn fetched_debian() -> Result<&'static RedisServer, String> {
    static FETCHED: OnceLock<Result<RedisServer, String>> = OnceLock::new();
    let fetched = FETCHED.get_or_init(|| fetch_debian(&fetched_dir()));
    fetched.as_ref().map_err(String::clone)
}

/// The server unpacked in `dir`, fetched first if it is not there yet. Only one call at a
/// time per process ([`fetched_debian`]): the work directory is named by the process.
fn fetch_debian(dir: &Path) -> Result<RedisServer, String> {
    if !dir.join("usr/bin/redis-server").exists() {
        let work = dir.with_extension(format!("partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&work);
        let fetched = unpack_debian_packages(&work);
        let root = work.join("root");
        let placed = fetched.and_then(|()| match std::fs::rename(&root, dir) {
            Ok(()) => Ok(()),
            // Another test process placed its copy first: the same packages, use that one.
            Err(_) if dir.join("usr/bin/redis-server").exists() => Ok(()),
            Err(e) => Err(format!(
                "moving {} to {}: {e}",
                root.display(),
                dir.display()
            )),
        });
        let _ = std::fs::remove_dir_all(&work);
        placed?;
    }
    let server = RedisServer {
        program: dir.join("usr/bin/redis-server"),
        library_path: Some(library_dirs(dir)?),
    };
    // A copy fetched before a library it relied on was removed from the machine, say.
    server.version().map_err(|why| {
        let dir = dir.display();
        format!("{why} (remove {dir} to fetch the packages again)")
    })?;
    Ok(server)
}

/// Downloads `redis-server`, `redis-tools` and the libraries they depend on that dpkg does
/// not list as installed (following the libraries' own dependencies too) into `work/debs`,
/// and unpacks them all into `work/root`.
fn unpack_debian_packages(work: &Path) -> Result<(), String> {
    let debs = work.join("debs");
    let root = work.join("root");
    for dir in [&debs, &root] {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let mut apt = Apt::System;
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut wanted: Vec<String> = vec!["redis-server".into(), "redis-tools".into()];
    while !wanted.is_empty() {
        seen.extend(wanted.iter().cloned());
        if let Err(why) = apt.download(&wanted, &debs) {
            // The machine's package lists are missing or out of date (a fresh container has
            // none): read the current ones into a directory of our own, no root needed.
            if apt != Apt::System {
                return Err(why);
            }
            let retry = Apt::private_lists(work).and_then(|private| {
                private.download(&wanted, &debs)?;
                Ok(private)
            });
            apt = retry.map_err(|again| {
                format!("with the machine's package lists, {why}; with fresh ones, {again}")
            })?;
        }
        let mut next = BTreeSet::new();
        for deb in files_in(&debs)? {
            next.extend(library_dependencies(&deb)?);
        }
        next.retain(|name| !seen.contains(name));
        wanted = not_installed(&next);
        seen.extend(next);
    }
    for deb in files_in(&debs)? {
        run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root))?;
    }
    Ok(())
}

/// Which package lists `apt-get` reads: the machine's, or ones it fetched into a
/// directory of the tests' own.
#[derive(PartialEq)]
enum Apt {
    System,
    Private(PathBuf),
}

impl Apt {
    fn private_lists(work: &Path) -> Result<Self, String> {
        let state = work.join("apt");
        for dir in ["lists/partial", "cache/archives/partial"] {
            let dir = state.join(dir);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        let apt = Apt::Private(state);
        run(apt.command().arg("update"))?;
        Ok(apt)
    }

    fn command(&self) -> Command {
        let mut command = Command::new("apt-get");
        command.args(["-q", "-o", "APT::Sandbox::User=root"]);
        if let Apt::Private(state) = self {
            let lists = state.join("lists");
            let cache = state.join("cache");
            command.arg("-o").arg(option("Dir::State::Lists", &lists));
            command.arg("-o").arg(option("Dir::Cache", &cache));
        }
        command
    }

    fn download(&self, packages: &[String], into: &Path) -> Result<(), String> {
        run(self
            .command()
            .arg("download")
            .args(packages)
            .current_dir(into))
    }
}

fn option(name: &str, dir: &Path) -> OsString {
    let mut option = OsString::from(format!("{name}="));
    option.push(dir);
    option
}

/// The packages a `.deb` depends on whose names say they are libraries (`lib*`): the
/// first choice of each alternative, without version or architecture.
fn library_dependencies(deb: &Path) -> Result<Vec<String>, String> {
    let fields = run_output(
        Command::new("dpkg-deb")
            .arg("-f")
            .arg(deb)
            .args(["Pre-Depends", "Depends"]),
    )?;
    Ok(fields
        .lines()
        .filter_map(|line| line.split_once(':').map(|(_, value)| value))
        .flat_map(|value| value.split(','))
        .filter_map(|choice| {
            let first = choice.split('|').next()?.trim();
            let name = first.split([' ', '(', ':']).next()?;
            name.starts_with("lib").then(|| name.to_owned())
        })
        .collect())
}

/// Those of `packages` that dpkg does not list as installed.
fn not_installed(packages: &BTreeSet<String>) -> Vec<String> {
    if packages.is_empty() {
        return Vec::new();
    }
    // Unknown names make dpkg-query fail; the installed ones are printed all the same.
    let listed = Command::new("dpkg-query")
        .args(["-W", "-f", "${Package} ${db:Status-Status}\\n"])
        .args(packages)
        .stderr(Stdio::null())
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .unwrap_or_default();
    let installed: BTreeSet<&str> = listed
        .lines()
        .filter_map(|line| line.strip_suffix(" installed"))
        .map(|name| name.split(':').next().unwrap_or(name))
        .collect();
    packages
        .iter()
        .filter(|name| !installed.contains(name.as_str()))
        .cloned()
        .collect()
}

/// `libfoo.so.1` and the like (not the plug-ins of OpenSSL's `engines-3/`, say).
fn is_shared_library(name: &str) -> bool {
    name.starts_with("lib") && name.contains(".so")
}

/// The directories under `root` that hold shared libraries, `:`-separated.
fn library_dirs(root: &Path) -> Result<OsString, String> {
    let mut dirs = BTreeSet::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                pending.push(path);
            } else if is_shared_library(&entry.file_name().to_string_lossy()) {
                dirs.insert(dir.clone());
            }
        }
    }
    std::env::join_paths(dirs).map_err(|e| e.to_string())
}

fn files_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    files.sort();
    Ok(files)
}

fn run(command: &mut Command) -> Result<(), String> {
    run_output(command).map(drop)
}

/// The command's standard output, or its last lines of error output when it fails.
fn run_output(command: &mut Command) -> Result<String, String> {
    let shown = format!("{command:?}");
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{shown}: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!("{shown} failed: {}", tail(&output)))
    }
}

fn tail(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = text.lines().rev().take(3).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
}
