package org.zrm.admin.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of the runtime's admin component (PID {@value AdminComponent#PID}). */
@ObjectClassDefinition(name = "ZRM admin",
        description = "Deploy folder and status reporting of the ZRM runtime.")
@interface AdminConfig {

    @AttributeDefinition(name = "Deploy folder",
            description = "Folder whose bundle jars are installed and started. Empty: the framework "
                    + "property zrm.deploy.dir, else ./deploy.")
    String deployDir() default "";

    @AttributeDefinition(name = "Deploy poll interval (ms)",
            description = "How often the deploy folder is scanned for new, changed or removed jars.", min = "100")
    long deployPollMillis() default 1000;
}
