//! Whether a window can be opened: a display named in the environment (`DISPLAY`,
//! `WAYLAND_DISPLAY`) whose server answers.
//!
//! A display that is named but absent (a stale `DISPLAY=:99` after the virtual server ended,
//! a forwarded display whose ssh session closed) used to reach the windowing library, which
//! panics in its event loop. Connecting to the server's socket first costs well under a
//! millisecond and turns that into a sentence naming the variable and the socket.

use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A Wayland display path that cannot exist (a path under a file), set by the demo to keep
/// libwayland's probe quiet when there is no display at all; never a display.
pub const NO_WAYLAND: &str = "/dev/null/no-wayland-display";

/// How long a TCP display (`host:N`) may take to accept.
const TCP_TIMEOUT: Duration = Duration::from_secs(1);

/// What the environment offers for a window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DisplayProbe {
    /// A server accepted a connection at a named display.
    Reachable,
    /// Neither `DISPLAY` nor `WAYLAND_DISPLAY` names a display.
    Unset,
    /// A display is named but no server answers; the text says which and where.
    Unreachable(String),
}

/// Probes the displays named in the environment.
pub fn probe_display() -> DisplayProbe {
    let named = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let x11 = named("DISPLAY");
    let wayland = named("WAYLAND_DISPLAY").filter(|v| v != NO_WAYLAND);
    let mut reasons = Vec::new();
    if let Some(display) = &x11 {
        match probe_x11(display) {
            Ok(()) => return DisplayProbe::Reachable,
            Err(why) => reasons.push(format!("DISPLAY={display} {why}")),
        }
    }
    if let Some(display) = &wayland {
        let runtime_dir = named("XDG_RUNTIME_DIR").map(PathBuf::from);
        match probe_wayland(display, runtime_dir.as_deref()) {
            Ok(()) => return DisplayProbe::Reachable,
            Err(why) => reasons.push(format!("WAYLAND_DISPLAY={display} {why}")),
        }
    }
    if reasons.is_empty() {
        DisplayProbe::Unset
    } else {
        DisplayProbe::Unreachable(reasons.join("; "))
    }
}

/// Connects to the X server of `display` (`[host]:number[.screen]`).
fn probe_x11(display: &str) -> Result<(), String> {
    let Some((host, rest)) = display.rsplit_once(':') else {
        return Err("is not an X display name (expected [host]:number)".to_owned());
    };
    let number = rest.split('.').next().unwrap_or("");
    let Ok(number) = number.parse::<u16>() else {
        return Err("is not an X display name (expected [host]:number)".to_owned());
    };
    if host.is_empty() || host == "unix" || host.starts_with('/') {
        let socket = if host.starts_with('/') {
            PathBuf::from(display)
        } else {
            PathBuf::from(format!("/tmp/.X11-unix/X{number}"))
        };
        return connect_unix(&socket)
            .or_else(|_| connect_abstract(&socket))
            .map_err(|e| format!("names no running X server ({}: {e})", socket.display()));
    }
    let Ok(port) = u16::try_from(6000 + u32::from(number)) else {
        return Err("is not an X display name (display number above 59535)".to_owned());
    };
    let addresses = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("names a host that does not resolve ({host}: {e})"))?;
    let mut last = format!("{host}:{port}: no address");
    for address in addresses {
        match TcpStream::connect_timeout(&address, TCP_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = format!("{address}: {e}"),
        }
    }
    Err(format!("names no reachable X server ({last})"))
}

/// Connects to the Wayland compositor's socket: `display` itself when absolute, else in
/// `$XDG_RUNTIME_DIR`.
fn probe_wayland(display: &str, runtime_dir: Option<&Path>) -> Result<(), String> {
    let socket = if Path::new(display).is_absolute() {
        PathBuf::from(display)
    } else {
        match runtime_dir {
            Some(dir) => dir.join(display),
            None => return Err("is relative and XDG_RUNTIME_DIR is not set".to_owned()),
        }
    };
    connect_unix(&socket)
        .map_err(|e| format!("names no running compositor ({}: {e})", socket.display()))
}

fn connect_unix(socket: &Path) -> std::io::Result<()> {
    UnixStream::connect(socket).map(drop)
}

/// X servers on Linux also listen on an abstract socket of the same name (the only one
/// reachable from a container that does not share `/tmp`).
#[cfg(target_os = "linux")]
fn connect_abstract(socket: &Path) -> std::io::Result<()> {
    use std::os::linux::net::SocketAddrExt;
    let name = socket.as_os_str().as_encoded_bytes();
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
    UnixStream::connect_addr(&address).map(drop)
}

#[cfg(not(target_os = "linux"))]
fn connect_abstract(_socket: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::NotFound.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_display_number_without_a_server_is_unreachable_and_named() {
        // Display numbers this high are never used by a real server.
        let why = probe_x11(":64999").unwrap_err();
        assert!(why.contains("/tmp/.X11-unix/X64999"), "{why}");
    }

    #[test]
    fn malformed_display_names_say_what_is_expected() {
        for bad in ["nonsense", ":x", "host:"] {
            let why = probe_x11(bad).unwrap_err();
            assert!(why.contains("expected [host]:number"), "{bad}: {why}");
        }
    }

    #[test]
    fn a_listening_wayland_socket_is_reachable_and_a_missing_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let _listener = UnixListener::bind(dir.path().join("wayland-7")).unwrap();
        assert_eq!(probe_wayland("wayland-7", Some(dir.path())), Ok(()));
        let why = probe_wayland("wayland-8", Some(dir.path())).unwrap_err();
        assert!(why.contains("wayland-8"), "{why}");
        assert!(probe_wayland("wayland-7", None).is_err());
    }

    #[test]
    fn a_listening_x_socket_path_is_reachable() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("org.x:0");
        let _listener = UnixListener::bind(&socket).unwrap();
        assert_eq!(probe_x11(socket.to_str().unwrap()), Ok(()));
    }
}
