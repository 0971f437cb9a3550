/* SPDX-License-Identifier: MIT */
/* Stub: to be written. */
