# shellcheck shell=bash
# What a static msd_run is and how it is checked: the one place for it. Sourced by
# scripts/build-release.sh (source builds: install.sh, the benches, the real-runtime tier) and by
# scripts/static-helper-rustc (the release archives, which cargo-dist builds).
#
# The flag: glibc static-pie. Given to the msd_run binary's compilation only (never through
# RUSTFLAGS: without --target they reach the proc macros, which cannot be built so, and with it
# msd-install would be static too; see build-release.sh for why msd-install stays dynamic).
static_helper_flags=(-C target-feature=+crt-static)
# Where the static C library that flag links comes from, for the messages of both scripts.
static_helper_libc_packages="Debian, Ubuntu: libc6-dev; Fedora, RHEL: glibc-static"
# Why a static msd_run must not call the functions listed below, for the same messages.
static_helper_nss_reason="a static glibc runs that only with the NSS modules of the glibc it was linked with"

# The functions a static glibc serves only through NSS modules, locale files or gconv modules
# of the glibc it was linked with (dlopen at run time); every static glibc binary contains
# dlopen itself (glibc's own gconv and NSS plumbing), which is why it is not in the list.
static_helper_nss_functions='getaddrinfo|getnameinfo|gethostbyname[0-9_r]*|gethostbyaddr[_r]*|getpwnam[_r]*|getpwuid[_r]*|getpwent[_r]*|getgrnam[_r]*|getgrgid[_r]*|getgrent[_r]*|getgrouplist|initgroups|getservbyname[_r]*|getservbyport[_r]*|getprotobyname[_r]*|getspnam[_r]*|iconv_open|setlocale|newlocale'

# static_helper_nss FILE: prints the functions of that list FILE defines, space-separated
# (nothing when it defines none); needs nm (binutils).
static_helper_nss() {
  nm "$1" 2>/dev/null | sed -n -E "s/^[0-9a-f]* *[TtWw] ($static_helper_nss_functions)$/\\1/p" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# static_helper_is_static FILE: whether FILE has no program interpreter (the dynamic loader);
# needs readelf (binutils).
static_helper_is_static() {
  ! readelf -lW "$1" | grep -q INTERP
}
