/* rf_version.h - GET /redfish: {"v1": "/redfish/v1/"} (DSP0266). */
#ifndef FB_RF_VERSION_H
#define FB_RF_VERSION_H

#include "rf_route.h"

int fb_rf_version_get(struct fb_rf_ctx *c);

#endif
