//! msd-install: the installer and emitter for the msd-core prompt framework.
