/* host/base/version.h - the version of passhost, as --version, the reports
 * and ph_pipeline_version say it. */
#ifndef PASSHOST_HOST_VERSION_H
#define PASSHOST_HOST_VERSION_H

#define HOST_VERSION "0.1.0"

#endif
