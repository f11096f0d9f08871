/** The Gogo commands and their rendering; private to the bundle. */
package org.zrm.shell.internal;
